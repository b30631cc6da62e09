import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { burstCases } from "../src/groups/burst.js"
import { closedCases } from "../src/groups/closed.js"
import { measureSubject } from "../src/groups/memory.js"
import { rejectionCases } from "../src/groups/rejection.js"
import { renderCache, renderOutput, renderRedis, renderRedisBreaker, extras } from "../src/extras.js"
import { measure } from "../src/harness.js"
import { calibration } from "../src/limits.js"
import { markdown, verdictTable } from "../src/report.js"
import type { GroupResult } from "../src/protocol.js"
import { timed } from "./utils.js"
import { MARKER, parse } from "../src/protocol.js"
import { median, pairedRatio, spread } from "../src/stats.js"
import * as S from "../src/subjects.js"
import { verdicts } from "../src/targets.js"

describe("stats", () => {
  it("median of odd and even counts, whatever the order", () => {
    assert.strictEqual(median([3, 1, 2]), 2)
    assert.strictEqual(median([4, 1, 3, 2]), 2.5)
    assert.isNaN(median([]))
  })
  it("pairedRatio is the median of the per-repeat ratios", () => {
    assert.strictEqual(pairedRatio([2, 20, 9], [1, 10, 3]), 2) // ratios 2, 2, 3
  })
  it("spread is half the interquartile range over the median", () => {
    assert.strictEqual(spread([10, 10, 10, 10]), 0)
    // quartiles of [1..5] are 2 and 4, median 3: (4 - 2) / 2 / 3
    assert.closeTo(spread([5, 1, 4, 2, 3]), 1 / 3, 1e-12)
  })
})

describe("subjects", () => {
  const failing: S.Work = Effect.fail("boom")
  it.effect("the floor guard opens after 5 failures in a row and then runs nothing", () =>
    Effect.gen(function* () {
      const floor = S.makeFloor()
      let ran = 0
      const work: S.Work = Effect.sync(() => ++ran)
      for (let i = 0; i < 4; i++) yield* Effect.either(floor.guard(failing))
      yield* floor.guard(work) // a success resets the count
      for (let i = 0; i < 4; i++) yield* Effect.either(floor.guard(failing))
      assert.isFalse(floor.isOpen())
      yield* Effect.either(floor.guard(failing))
      assert.isTrue(floor.isOpen())
      const result = yield* Effect.either(floor.guard(work))
      assert.isTrue(result._tag === "Left")
      assert.strictEqual(ran, 1)
    })
  )
  it.effect("the naive breaker opens after 5 failures in a row and then runs nothing", () =>
    Effect.gen(function* () {
      const naive = yield* S.makeNaive
      let ran = 0
      const work: S.Work = Effect.sync(() => ++ran)
      assert.strictEqual(yield* naive.guard(work), 1)
      for (let i = 0; i < 5; i++) yield* Effect.either(naive.guard(failing))
      assert.isTrue(naive.isOpen())
      const result = yield* Effect.either(naive.guard(work))
      assert.isTrue(result._tag === "Left" && (result.left as { _tag: string })._tag === "NaiveOpen")
      assert.strictEqual(ran, 1)
    })
  )
})

describe("cases", () => {
  it("every closed-path row runs the work once per call, in both shapes", async () => {
    for (const shape of ["in-fiber", "per-call"] as const) {
      const cases = await closedCases(shape)
      assert.strictEqual(new Set(cases.map((c) => c.id)).size, cases.length)
      for (const c of cases) await c.run(3) // rejects if any call fails
    }
  })

  it("every rejection row is refused without running the work", async () => {
    let ran = 0
    const cases = await rejectionCases(
      Effect.sync(() => ++ran),
      () => Promise.resolve(++ran)
    )
    assert.isAbove(cases.length, 5)
    for (const c of cases) await c.run(5)
    assert.strictEqual(ran, 0)
  })

  it("every burst row completes its calls", async () => {
    const cases = await burstCases()
    for (const c of cases) await c.run(50)
  })

  it("measure reports one median per case, in order, from `repeats` samples", async () => {
    let calls = 0
    const rows = await measure(
      [
        { id: "a", label: "A", run: async (n) => void (calls += n) },
        { id: "b", label: "B", run: async (n) => void (calls += n) }
      ],
      { calls: 10, warmup: 2, repeats: 3 }
    )
    assert.deepStrictEqual(
      rows.map((r) => [r.id, r.samples.length, r.callsPerSample]),
      [
        ["a", 3, 10],
        ["b", 3, 10]
      ]
    )
    assert.strictEqual(calls, 2 * (2 * 2 + 3 * 10))
    assert.isTrue(rows.every((r) => r.samples.every((s) => s >= 0 && Number.isFinite(s)) && r.wallNsPerCall >= 0))
  })
})

describe("memory", () => {
  it("measures each subject over the number of breakers asked for", async () => {
    for (const id of ["circuitry-consecutive", "opossum"]) {
      const row = await measureSubject(id, 200, 1)
      assert.strictEqual(row.breakers, 200)
      assert.strictEqual(row.samples.length, 1)
    }
  })
})

describe("report", () => {
  const memory = (id: string, bytesPerBreaker: number): GroupResult => ({
    _tag: "Memory",
    group: `memory:${id}`,
    notes: [],
    rows: [{ id, label: id, bytesPerBreaker, samples: [bytesPerBreaker], breakers: 1, createMillis: 0 }]
  })

  it("verdicts: ratios at most the limit pass, absolute limits must be undercut", () => {
    const results: Array<GroupResult> = [
      timed("in-fiber", {
        floor: 400,
        "circuitry-consecutive": 600, // 1.5x the floor: passes; 0.3x the bridge: fails
        "circuitry-rate": 601, // just over 1.5x
        "cockatiel-consecutive-bridged": 2000
      }),
      timed("rejection", { floor: 100, "circuitry-consecutive": 999, "circuitry-rate": 1000 }),
      memory("circuitry-consecutive", 999.9),
      memory("circuitry-rate", 1000)
    ]
    const pass = Object.fromEntries(verdicts(results).map((v) => [v.target, v.pass]))
    assert.deepStrictEqual(Object.values(pass).slice(0, 8), [true, false, false, false, true, false, true, false])
  })

  it("speed verdicts: ratios to the floor, a transition is half the isolate+reset row, the first call is what it adds", () => {
    const results: Array<GroupResult> = [
      timed("in-fiber", { floor: 400, "circuitry-consecutive": 400, "circuitry-rate": 401 }),
      timed("rejection", { floor: 500, "circuitry-consecutive": 550, "circuitry-rate": 551 }),
      {
        ...timed("registry", {
          "map-get": 100,
          "registry-get": 130,
          "registry-make": 4000,
          "registry-make-call": 5400,
          make: 5001,
          "closed-call": 300,
          transition: 2001
        }),
        floor: "map-get"
      },
      memory("circuitry-consecutive-used", 700),
      memory("circuitry-rate-used", 701),
      memory("circuitry-churn", 16.5)
    ]
    const pass = Object.fromEntries(verdicts(results).map((v) => [v.target, v.pass]))
    const at = (start: string) =>
      Object.entries(pass)
        .filter(([target]) => target.startsWith(start))
        .map(([, p]) => p)
    assert.deepStrictEqual(at("closed call, consecutiveFailures(5): <= 1.00x"), [true])
    assert.deepStrictEqual(at("closed call, failureRate(countWindow(100)): <= 1.00x"), [false])
    assert.deepStrictEqual(at("closed call, failureRate(timeWindow(10 s))"), [undefined])
    assert.deepStrictEqual(at("open rejection, consecutiveFailures(5): <= 1.10x"), [true])
    assert.deepStrictEqual(at("open rejection, failureRate(countWindow(100)): <= 1.10x"), [false])
    assert.deepStrictEqual(at("a transition"), [false]) // 1000.5 ns
    assert.deepStrictEqual(at("a breaker's first call"), [false]) // 5400 - 4000 - 300 = 1100 ns
    assert.deepStrictEqual(at("making a breaker"), [true, false])
    assert.deepStrictEqual(at("registry.get on a hit"), [true])
    assert.deepStrictEqual(at("memory per used breaker"), [true, false])
    assert.deepStrictEqual(at("memory under churn"), [false])
  })

  it("verdicts: a figure missing from the run is NOT MEASURED, never a pass", () => {
    const all = verdicts([timed("in-fiber", { floor: 400 })])
    assert.isTrue(all.every((v) => v.pass === undefined && v.measured === "not measured"))
  })

  it("the document holds the machine, the verdicts, each group's table and what could not run", () => {
    const results: Array<GroupResult> = [
      timed("in-fiber", { floor: 400, "circuitry-consecutive": 480, "cockatiel-consecutive-bridged": 2000 }),
      memory("circuitry-consecutive", 577)
    ]
    const results4: Array<GroupResult> = [
      timed("in-fiber", { floor: 500, "circuitry-consecutive": 800, "cockatiel-consecutive-bridged": 2000 })
    ]
    const doc = markdown(
      {
        machine: {
          date: "2026-01-01T00:00:00Z",
          cpu: "Test CPU",
          cores: 2,
          memoryGiB: 24,
          os: "Linux",
          node: "v20.0.0",
          loadBefore: [1, 1, 1],
          loadAfter: [2, 2, 2],
          commit: "abc123",
          versions: { effect: "3.22.4" },
          seconds: 100,
          calibration: calibration([150], 50),
          limits: [{ what: "each timed group", quietMillis: 150_000, millis: 450_000 }]
        },
        editions: [
          {
            major: 3,
            effect: "3.22.4",
            results,
            verdicts: verdicts(results),
            others: [{ title: "Redis", status: "skipped", text: "not there" }]
          },
          { major: 4, effect: "4.1.0", results: results4, verdicts: verdicts(results4), others: [] }
        ]
      },
      "pnpm bench"
    )
    assert.include(doc, "| CPU | Test CPU, 2 cores |")
    assert.include(doc, "| effect | 3.22.4 |")
    assert.include(
      doc,
      "| calibration | a fixed CPU workload took 150 ms (median of 150 ms) against 50 ms on a quiet machine: 3.00x |"
    )
    assert.include(doc, "| time limits | each timed group 450 s (150 s on a quiet machine) |")
    assert.include(
      doc,
      "| target | Effect 3: measured | Effect 3 | Effect 4: measured | Effect 4 |\n| --- | ---: | ---: | ---: | ---: |"
    )
    // Each major's verdict from its own figures: 480 / 400 on Effect 3, 800 / 500 on Effect 4.
    assert.include(
      doc,
      "| closed call, consecutiveFailures(5): <= 1.5x the floor guard (in-fiber) | 1.20x | PASS | 1.60x | **FAIL** |"
    )
    assert.include(
      doc,
      "| closed call, consecutiveFailures(5): <= 0.25x cockatiel ConsecutiveBreaker bridged (in-fiber) | 0.24x | PASS | 0.40x | **FAIL** |"
    )
    assert.include(
      doc,
      "| open rejection, consecutiveFailures(5): < 1 us | not measured | NOT MEASURED | not measured | NOT MEASURED |"
    )
    assert.include(doc, "Effect 3 (effect 3.22.4):\n\n| row | ns/call, CPU (median) |")
    assert.include(doc, "| circuitry-consecutive | 480 | 0% | 480 | 1.20x |")
    // Effect 4's table: its own x floor, then its median over Effect 3's.
    assert.include(doc, "| circuitry-consecutive | 800 | 0% | 800 | 1.60x | 1.67x |")
    assert.include(doc, "| circuitry-consecutive | 577 | 577 | 0.0 |")
    assert.include(doc, "## Redis\n\nEffect 3 (effect 3.22.4):\n\nSkipped: not there")
  })

  it("the targets table: a target whose package did not run on a major is NOT RUN there", () => {
    const v3 = [
      { target: "a", measured: "1.00x", pass: true },
      { target: "b", measured: "2.00x", pass: false }
    ]
    const v4 = [{ target: "a", measured: "1.50x", pass: false }]
    const rows = verdictTable([
      { major: 3, verdicts: v3 },
      { major: 4, verdicts: v4 }
    ]).split("\n")
    assert.deepStrictEqual(rows.slice(2), [
      "| a | 1.00x | PASS | 1.50x | **FAIL** |",
      "| b | 2.00x | **FAIL** | not run | NOT RUN |"
    ])
  })

  it("a child's result is found after its marker, among other output", () => {
    const result = timed("burst", { floor: 1 })
    const stdout = `warming up\n{"not":"this"}\n${MARKER}${JSON.stringify(result)}\nbye\n`
    assert.deepStrictEqual(parse(stdout), result)
    assert.isUndefined(parse("no marker here\n"))
  })

  it("renders the cache and Redis scripts' JSON as tables, and says nothing of unreadable output", () => {
    const cache = renderCache({
      batch: 20000,
      repeats: 25,
      figures: [{ name: "MemoryStore.get (baseline)", nsPerGet: 120.4, overheadNs: 0, ratio: 1 }]
    })
    assert.include(cache, "| MemoryStore.get (baseline) | 120 | +0 ns | 1x |")
    const redis = renderRedis({
      url: "redis://127.0.0.1:6379",
      ops: 10,
      rounds: 2,
      valueBytes: 100,
      results: [
        { op: "get", mode: "sequential", rawOpsPerSec: 20000, storeOpsPerSec: 15000, ratio: 0.75 },
        { op: "get", mode: "concurrent 64", rawOpsPerSec: 50000, storeOpsPerSec: 35000, ratio: 0.7 },
        { op: "set", mode: "concurrent 64", rawOpsPerSec: 40000, storeOpsPerSec: 36000, ratio: 0.9 }
      ]
    })
    assert.include(redis, "| get | sequential | 20,000 | 15,000 | 75% |  |")
    assert.include(redis, "| get | concurrent 64 | 50,000 | 35,000 | 70% | **FAIL** |")
    assert.include(redis, "| set | concurrent 64 | 40,000 | 36,000 | 90% | PASS |")
    const breaker = renderRedisBreaker({
      url: "redis://127.0.0.1:6379",
      calls: 10,
      rounds: 3,
      results: [
        { label: "a failing call", memoryMicros: 4.84, redisMicros: 9.2, ratio: 1.9 },
        { label: "a cycle", memoryMicros: 6.8, redisMicros: 17.6, ratio: 2.59, rawMicros: 35.2 }
      ]
    })
    assert.include(breaker, "| a failing call | 4.8 | 9.2 | 1.9x | PASS |  |  |")
    assert.include(breaker, "| a cycle | 6.8 | 17.6 | 2.59x | **FAIL** | 35.2 | 0.5x |")
    assert.isUndefined(renderRedisBreaker({ results: "no" }))
    assert.isUndefined(renderCache({ something: "else" }))
    const stdout = `progress\n${JSON.stringify({ figures: [] })}\n`
    assert.isString(renderOutput(extras[0]!, stdout))
    assert.isUndefined(renderOutput(extras[0]!, "no json\n"))
  })
})
