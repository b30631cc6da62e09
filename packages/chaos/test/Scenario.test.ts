import { Chaos, Scenario } from "@circuitry/chaos"
import { Edition } from "@circuitry/core"
import { assert, describe, it, TestClock } from "@circuitry/testkit"
import { Clock, Effect, Fiber, Metric } from "effect"

/** A dependency that answers in 5 ms, fails 10% of calls and slows down by p50/p99 20/200 ms. */
const flaky = Effect.sleep("5 millis").pipe(
  Chaos.inject(
    Chaos.latency({ p50: "20 millis", p99: "200 millis" }),
    Chaos.fail({ rate: 0.1, error: () => "unavailable" })
  )
)

describe("Scenario.run", () => {
  it.effect("the same seed gives the same report; another seed another", () =>
    Effect.gen(function* () {
      const run = (seed: number) => Scenario.run({ duration: "30 seconds", rate: 200, request: () => flaky, seed })
      const a = yield* run(11)
      assert.deepStrictEqual(yield* run(11), a)
      const b = yield* run(12)
      assert.notDeepEqual(
        b.seconds.map((s) => s.failures),
        a.seconds.map((s) => s.failures)
      )
      assert.strictEqual(a.total.calls, 6000)
      // About 10% fail.
      assert.isTrue(a.total.failures > 480 && a.total.failures < 720, `${a.total.failures} failures`)
      // And the very figures, the same on Effect 3 and Effect 4: a seed's report does not depend on
      // the major's scheduler (docs/editions.md).
      assert.deepStrictEqual([a.total.failures, a.total.p50, a.total.p99], [632, 24, 213])
    })
  )

  it.effect("arrivals are open-loop at the rate, constant or a function of the second", () =>
    Effect.gen(function* () {
      const arrivals: Array<number> = []
      const report = yield* Scenario.run({
        duration: "4 seconds",
        rate: (second) => [10, 0, 4, 2.5][second]!,
        // Each request takes 3 s: arrivals do not wait for answers.
        request: () =>
          Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sleep(3000).pipe(Effect.as(arrivals.push(now))))
      })
      assert.deepStrictEqual(
        report.seconds.map((s) => s.calls),
        [10, 0, 4, 3]
      )
      // Evenly spaced within a second; 2.5/s carries its half over (arrivals at 3000, 3400, 3800).
      assert.deepStrictEqual(arrivals.slice(0, 3), [0, 100, 200])
      assert.deepStrictEqual(arrivals.slice(10), [2000, 2250, 2500, 2750, 3000, 3400, 3800])
      assert.deepStrictEqual(
        report.seconds.map((s) => s.p99),
        [3000, 0, 3000, 3000]
      )
    })
  )

  it.effect("fault windows are honoured to the millisecond of scenario time", () =>
    Effect.gen(function* () {
      // Starts at Clock 5,000: scenario time is from the run's start, not from the Clock's zero.
      yield* TestClock.setTime(5000)
      const down = Chaos.during({ from: "60 seconds", to: "66 seconds" }, Chaos.fail({ rate: 1, error: () => "down" }))
      const slow = Chaos.during({ from: "60 seconds", to: "66 seconds" }, Chaos.latency("7 millis"))
      const failed: Array<number> = []
      const report = yield* Scenario.run({
        duration: "70 seconds",
        rate: 1000, // one request per millisecond: request i arrives at i ms
        request: (i) =>
          Effect.void.pipe(
            Chaos.inject(slow, down),
            Effect.tapError(() => Effect.sync(() => failed.push(i)))
          )
      })
      assert.strictEqual(failed.length, 6000)
      assert.deepStrictEqual([failed[0], failed[5999]], [60_000, 65_999])
      assert.deepStrictEqual(
        report.seconds.slice(59, 67).map((s) => [s.failures, s.p50]),
        [
          [0, 0],
          [1000, 7],
          [1000, 7],
          [1000, 7],
          [1000, 7],
          [1000, 7],
          [1000, 7],
          [0, 0]
        ]
      )
    })
  )

  it.effect("counts what the requests count, and what Metric counters gained, by the second", () =>
    Effect.gen(function* () {
      const queries = Metric.counter("chaos_test_queries")
      const report = yield* Scenario.run({
        duration: "3 seconds",
        rate: 10,
        request: (i) =>
          Effect.all([
            Scenario.count("db.queries"),
            Metric.update(queries, 1),
            i % 2 === 0 ? Scenario.count("even", 2) : Effect.void
          ]),
        counters: { "metric.queries": queries }
      })
      assert.deepStrictEqual(
        report.seconds.map((s) => s.counters),
        [0, 1, 2].map(() => ({ "db.queries": 10, even: 10, "metric.queries": 10 }))
      )
      assert.deepStrictEqual(report.total.counters, { "db.queries": 30, even: 30, "metric.queries": 30 })
      // Outside a scenario, counting does nothing.
      yield* Scenario.count("db.queries")
    })
  )

  it.effect(
    "runs ten minutes of traffic in virtual time, and also when the test forks it and adjusts a TestClock",
    () =>
      Effect.gen(function* () {
        const options = { duration: "10 minutes", rate: 100, request: () => flaky, seed: 5 } as const
        const direct = yield* Scenario.run(options)
        const fiber = yield* Edition.forkChild(Scenario.run(options))
        yield* TestClock.adjust("10 minutes")
        const forked = yield* Fiber.join(fiber)
        assert.strictEqual(direct.seconds.length, 600)
        assert.strictEqual(direct.total.calls, 60_000)
        assert.deepStrictEqual(forked, direct)
      }),
    // 120,000 requests of CPU work: about 4 s at load 11, 30 s at load 37 on 2 cores. The time limit
    // only catches a hang; what is under test is virtual time, which no real-time bound measures.
    120_000
  )

  it.effect("lets the event loop run while it runs: a long scenario never holds up the process's I/O", () =>
    Effect.gen(function* () {
      let ticked = false
      setTimeout(() => (ticked = true), 0)
      const seen: Array<boolean> = []
      yield* Scenario.run({ duration: "30 seconds", rate: 10, request: () => Effect.sync(() => seen.push(ticked)) })
      assert.isFalse(seen[0])
      assert.isTrue(seen.includes(true))
    })
  )

  it.effect("a request past the timeout is interrupted and fails; after the drain, what is in flight fails", () =>
    Effect.gen(function* () {
      let interrupted = 0
      const report = yield* Scenario.run({
        duration: "2 seconds",
        rate: 2,
        timeout: "1 second",
        request: (i) =>
          (i === 1 ? Effect.never : Effect.sleep(10)).pipe(Effect.onInterrupt(() => Effect.sync(() => interrupted++)))
      })
      assert.deepStrictEqual(
        report.seconds.map((s) => [s.calls, s.failures, s.p99]),
        [
          [2, 1, 1000],
          [2, 0, 10]
        ]
      )
      const stuck = yield* Scenario.run({
        duration: "1 second",
        rate: 1,
        drain: "5 seconds",
        request: () => Effect.never
      })
      assert.deepStrictEqual([stuck.total.failures, stuck.total.p99], [1, 6000])
      assert.strictEqual(interrupted, 1)
      // One whose interruption never finishes (its finalizer waits an hour) still fails in the
      // second it arrived in, with the time it was given.
      const stubborn = yield* Scenario.run({
        duration: "3 seconds",
        rate: 1,
        drain: "1 second",
        request: (i) => (i === 0 ? Effect.onInterrupt(Effect.never, () => Effect.sleep("1 hour")) : Effect.void)
      })
      assert.deepStrictEqual(
        stubborn.seconds.map((s) => [s.calls, s.failures, s.p99]),
        [
          [1, 1, 4000],
          [1, 0, 0],
          [1, 0, 0]
        ]
      )
    })
  )

  it.effect("bad options fail with InvalidChaosOptions naming the option", () =>
    Effect.gen(function* () {
      const message = (options: Scenario.Options<never>) =>
        Effect.map(Effect.flip(Scenario.run(options)), (e) => e.message)
      assert.strictEqual(
        yield* message({ duration: 0, rate: 1, request: () => Effect.void }),
        "Scenario.run: duration must be a finite duration > 0, got 0"
      )
      assert.strictEqual(
        yield* message({ rate: 1, request: () => Effect.void } as unknown as Scenario.Options<never>),
        "Scenario.run: duration must be a finite duration > 0, got undefined"
      )
      assert.strictEqual(
        yield* message({ duration: "3 seconds", rate: (s) => (s === 2 ? -1 : 5), request: () => Effect.void }),
        "Scenario.run: rate must be a finite number of requests per second, zero or more; in second 2 it is -1"
      )
      assert.strictEqual(
        yield* message({ duration: "3 seconds", rate: -1, request: () => Effect.void }),
        "Scenario.run: rate must be a finite number >= 0 (requests per second) or a function of the second, got -1"
      )
      assert.strictEqual(
        yield* message({ duration: "1 second", rate: 1, request: 5 as unknown as () => Effect.Effect<void> }),
        "Scenario.run: request must be a function of the request's index, got 5"
      )
      assert.strictEqual(
        yield* message({ duration: "1 second", rate: 1, seed: 1.5, request: () => Effect.void }),
        "Scenario.run: seed must be a whole number from 0 to 4294967295, got 1.5"
      )
      assert.strictEqual(
        yield* message({ duration: "1 second", rate: 1, timeout: "-1 seconds", request: () => Effect.void }),
        'Scenario.run: timeout must be a duration > 0, got "-1 seconds"'
      )
      assert.strictEqual(
        yield* message({ duration: "1 second", rate: 1, deadline: -1, request: () => Effect.void }),
        "Scenario.run: deadline must be a duration >= 0, got -1"
      )
      assert.strictEqual(
        yield* message({
          duration: "1 second",
          rate: 1,
          drain: "forever" as Edition.DurationInput,
          request: () => Effect.void
        }),
        'Scenario.run: drain must be a finite duration >= 0, got "forever"'
      )
    })
  )
})

describe("Scenario.expect", () => {
  const report = Scenario.run({
    duration: "10 seconds",
    rate: 100,
    request: (i) =>
      Effect.gen(function* () {
        yield* Scenario.count("db.queries", i >= 700 && i < 800 ? 3 : 1)
        // Second 4 is slow; second 6 fails a fifth of its calls.
        if (i >= 400 && i < 500) yield* Effect.sleep(300)
        if (i >= 600 && i < 700 && i % 5 === 0) yield* Effect.fail("boom")
      })
  })

  it.effect("passes an SLO the run kept", () =>
    Effect.gen(function* () {
      const r = yield* report
      yield* Scenario.expect(r, { maxFailureRate: 0.2, maxP99: "300 millis", maxCounter: { "db.queries": 300 } })
    })
  )

  it.effect("names the first second that broke, and the figure", () =>
    Effect.gen(function* () {
      const r = yield* report
      const broken = (slo: Scenario.Slo) =>
        Effect.flatMap(Effect.flip(Scenario.expect(r, slo)), (e) =>
          e._tag === "SloBroken" ? Effect.succeed(e) : Effect.die(e)
        )
      const p99 = yield* broken({ maxP99: "299 millis", maxFailureRate: 0.5 })
      assert.deepStrictEqual(
        [p99._tag, p99.second, p99.figure, p99.value, p99.limit],
        ["SloBroken", 4, "p99", 300, 299]
      )
      assert.strictEqual(p99.message, "SLO broken in second 4: p99 latency 300 ms is above the SLO's 299 ms")
      const rate = yield* broken({ maxFailureRate: 0.19 })
      assert.deepStrictEqual([rate.second, rate.figure, rate.value], [6, "failureRate", 0.2])
      const counter = yield* broken({ maxCounter: { "db.queries": 299 } })
      assert.deepStrictEqual(
        [counter.second, counter.figure, counter.counter, counter.value],
        [7, "counter", "db.queries", 300]
      )
    })
  )

  it.effect("an SLO that is itself wrong is an InvalidChaosOptions", () =>
    Effect.gen(function* () {
      const r = yield* report
      const typo = yield* Effect.flip(Scenario.expect(r, { maxCounter: { "db.querys": 1 } }))
      assert.strictEqual(typo._tag, "InvalidChaosOptions")
      assert.match(typo.message, /"db.querys", which the scenario never counted \(it counted "db.queries"\)/)
      const message = (slo: Scenario.Slo) => Effect.map(Effect.flip(Scenario.expect(r, slo)), (e) => e.message)
      assert.strictEqual(
        yield* message({ maxFailureRate: 2 }),
        "Scenario.expect: maxFailureRate must be a number from 0 to 1, got 2"
      )
      assert.strictEqual(
        yield* message({ maxP99: "-5 millis" }),
        'Scenario.expect: maxP99 must be a duration >= 0, got "-5 millis"'
      )
      assert.strictEqual(
        yield* message({ maxCounter: { "db.queries": -1 } }),
        'Scenario.expect: maxCounter["db.queries"] must be a number of zero or more, got -1'
      )
      assert.strictEqual(
        yield* message({ maxCounter: 5 as unknown as Record<string, number> }),
        "Scenario.expect: maxCounter must be an object of counter names and limits, got 5"
      )
      assert.isTrue(Scenario.isReport(r))
      assert.isFalse(Scenario.isReport({ seconds: [] }))
    })
  )
})

describe("Scenario.random", () => {
  it.effect("draws from the request's own seeded stream: request i gets the same draws in every run of a seed", () =>
    Effect.gen(function* () {
      const draws = (seed: number) =>
        Effect.gen(function* () {
          const seen = new Map<number, number>()
          yield* Scenario.run({
            duration: "1 second",
            rate: 50,
            seed,
            // Half the requests sleep first: the order they draw in differs, their draws do not.
            request: (i) =>
              Effect.andThen(
                i % 2 === 0 ? Effect.sleep(5) : Effect.void,
                Effect.map(Scenario.random, (u) => seen.set(i, u))
              )
          })
          return Array.from({ length: 50 }, (_, i) => seen.get(i)!)
        })
      const a = yield* draws(1)
      assert.deepStrictEqual(yield* draws(1), a)
      assert.notDeepEqual(yield* draws(2), a)
      assert.isTrue(a.every((u) => u >= 0 && u < 1))
      assert.strictEqual(new Set(a).size, 50)
    })
  )
})
