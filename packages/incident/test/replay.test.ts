import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Flags from "../src/Flags.js"
import type { Second } from "../src/Model.js"
import * as Replay from "../src/Replay.js"
import * as Report from "../src/Report.js"
import * as Svg from "../src/Svg.js"

// A small incident: 300 requests/s, a 3 s stall at 10 s, the breaker open 10 s.
const config: Replay.Config = {
  ...Replay.defaults,
  rate: 300,
  keys: 5_000,
  ttlMillis: 20_000,
  dbCapacity: 200,
  stallAtMillis: 10_000,
  stallMillis: 3_000,
  openForMillis: 10_000,
  durationMillis: 40_000,
  maxConcurrentLoads: 16
}

const sum = (seconds: ReadonlyArray<Second>, from: number, to: number, f: (s: Second) => number) =>
  seconds.slice(from, to).reduce((total, s) => total + f(s), 0)

describe("the replay", () => {
  it.effect("runs the same traffic through every strategy, and each strategy behaves as designed", () =>
    Effect.gen(function* () {
      const result = yield* Replay.run(config)
      const lane = (name: string) => result.lanes.find((l) => l.name === name)!
      const [none, shed, repair, flight] = [lane("none"), lane("shed"), lane("repair"), lane("single-flight")]
      assert.deepStrictEqual(
        result.lanes.map((l) => l.name),
        ["none", "shed", "repair", "single-flight"]
      )

      // Before the stall the cache is healthy: the same requests and misses everywhere, and the same
      // queries for every cache-aside strategy (single flight sends fewer: it shares loads).
      for (const l of result.lanes) {
        assert.strictEqual(
          sum(l.seconds, 0, 40, (s) => s.requests),
          300 * 40
        )
        assert.deepStrictEqual(
          l.seconds.slice(0, 10).map((s) => [s.requests, s.misses, s.failed]),
          none.seconds.slice(0, 10).map((s) => [s.requests, s.misses, s.failed])
        )
      }
      assert.deepStrictEqual(shed.seconds.slice(0, 10), none.seconds.slice(0, 10))
      assert.deepStrictEqual(repair.seconds.slice(0, 10), none.seconds.slice(0, 10))
      assert.isAtMost(
        sum(flight.seconds, 0, 10, (s) => s.queries),
        sum(none.seconds, 0, 10, (s) => s.queries)
      )
      assert.isAbove(
        sum(none.seconds, 0, 10, (s) => s.misses),
        0
      )

      // No breaker, no transitions; the others open when the stall ends and close 10 s later.
      assert.deepStrictEqual(none.transitions, [])
      for (const l of [shed, repair, flight]) {
        const opened = l.transitions.find((t) => t.to === "Open")!
        const closed = l.transitions.find((t) => t.to === "Closed")!
        assert.isTrue(opened.at >= 12_500 && opened.at <= 13_500, `${l.name} opened at ${opened.at}`)
        assert.strictEqual(closed.at - opened.at, 10_000)
      }

      // While open, every read is shed: every request misses.
      for (const l of [shed, repair, flight]) {
        assert.strictEqual(
          sum(l.seconds, 15, 22, (s) => s.misses),
          sum(l.seconds, 15, 22, (s) => s.requests)
        )
      }
      // Without a breaker, the cache is back when the stall ends.
      assert.isBelow(
        sum(none.seconds, 15, 22, (s) => s.misses),
        sum(none.seconds, 15, 22, (s) => s.requests) / 2
      )

      // Repair kept the cache warm while shedding reads; shedding writes too left it cold.
      const afterClose = (l: Replay.Lane) => sum(l.seconds, 24, 30, (s) => s.misses)
      assert.isBelow(afterClose(repair), afterClose(shed))
      // Single flight sends the database fewer queries while the circuit is open (one per key in
      // flight), so the database refuses fewer and fewer requests fail.
      const open = (l: Replay.Lane, f: (s: Second) => number) => sum(l.seconds, 14, 22, f)
      assert.isBelow(
        open(flight, (s) => s.queries),
        open(repair, (s) => s.queries)
      )
      assert.isBelow(
        open(flight, (s) => s.refused),
        open(repair, (s) => s.refused)
      )
      assert.isBelow(
        open(flight, (s) => s.failed),
        open(repair, (s) => s.failed)
      )
      // And the database turned requests away only where it was flooded.
      assert.isAbove(repair.summary.failed, none.summary.failed)
      assert.strictEqual(repair.summary.recoverySeconds !== undefined, true)

      // The same flags give the same numbers.
      const again = yield* Replay.run(config)
      assert.deepStrictEqual(
        again.lanes.map((l) => l.seconds),
        result.lanes.map((l) => l.seconds)
      )

      // Reports: a table row per interval, a summary line per strategy, a chart per metric.
      const table = Report.table(result, 10).split("\n")
      assert.strictEqual(table.length, 2 + 4)
      assert.include(table[4]!, "20-30s")
      const summary = Report.summary(result).split("\n")
      assert.strictEqual(summary.length, 4)
      assert.match(summary[1]!, /^shed +peak database load +[\d,]+ q\/s/)
      const chart = Report.chart(result, Report.metrics[0]!, { width: 40, height: 8, color: false }).split("\n")
      assert.strictEqual(chart[0], "  cache misses/s")
      assert.strictEqual(chart.length, 1 + 8 + 3)
      const svg = Svg.render(result)
      assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
      assert.strictEqual(svg.match(/<polyline /g)?.length, Report.metrics.length * 4)
    })
  )
})

describe("flags", () => {
  it("defaults to the incident's numbers", () => {
    const parsed = Flags.parse([])
    assert.isTrue(Either.isRight(parsed))
    const command = Either.getOrThrow(parsed)
    assert.strictEqual(command.config.rate, 1500)
    assert.strictEqual(command.config.stallAtMillis, 60_000)
    assert.strictEqual(command.config.stallMillis, 6_000)
    assert.strictEqual(command.config.openForMillis, 30_000)
    assert.deepStrictEqual(command.config.strategies, ["none", "shed", "repair", "single-flight"])
    assert.isFalse(command.help)
  })

  it("reads times with units, numbers and a list of strategies", () => {
    const command = Either.getOrThrow(
      Flags.parse([
        "--",
        "--rate",
        "500",
        "--stall",
        "2500ms",
        "--open-for",
        "1m",
        "--strategies",
        "shed,repair",
        "--help"
      ])
    )
    assert.strictEqual(command.config.rate, 500)
    assert.strictEqual(command.config.stallMillis, 2500)
    assert.strictEqual(command.config.openForMillis, 60_000)
    assert.deepStrictEqual(command.config.strategies, ["shed", "repair"])
    assert.isTrue(command.help)
  })

  it("says which flag is wrong and why", () => {
    const message = (argv: Array<string>) => {
      const parsed = Flags.parse(argv)
      assert.isTrue(Either.isLeft(parsed))
      return Either.isLeft(parsed) ? parsed.left.message : ""
    }
    assert.match(message(["--rate=-3"]), /^--rate: must be a number from 1 to 20000, got "-3"/)
    assert.match(message(["--stall", "soon"]), /^--stall: must be a time/)
    assert.match(message(["--strategies", "shed,magic"]), /unknown strategy "magic"/)
    assert.match(message(["--max-loads", "1.5"]), /^--max-loads: must be a whole number/)
    assert.match(message(["--frobnicate"]), /frobnicate/)
  })

  it("--help names every flag", () => {
    for (const flag of ["--rate", "--stall", "--stall-at", "--open-for", "--strategies", "--db-capacity", "--out"]) {
      assert.include(Flags.help, flag)
    }
  })
})
