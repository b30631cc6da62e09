import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Flags from "../src/Flags.js"
import { incidents } from "../src/incidents.js"
import * as Overload from "../src/overload/Overload.js"
import * as OverloadIncident from "../src/overload/incident.js"
import * as Svg from "../src/Svg.js"

const mean = (values: ReadonlyArray<number | undefined>) =>
  values.reduce<number>((sum, v) => sum + (v ?? NaN), 0) / values.length

describe("the overload replay", () => {
  // The headline figures of docs/incident.md, with the defaults: a change that worsens a strategy
  // (less goodput, more timeouts or rejections, a slower p99, a longer time to settle) fails here.
  it.effect("pins the headline figures of the defaults", () =>
    Effect.gen(function* () {
      const result = yield* Overload.run(Overload.defaults)
      assert.deepStrictEqual(
        result.lanes.map((l) => [
          l.name,
          Math.round(l.summary.goodput * 100),
          l.summary.p99,
          l.summary.failed,
          l.summary.rejected,
          l.summary.settleHalved,
          l.summary.settleBack
        ]),
        [
          ["no-limit", 4, 1000, 11614, 0, undefined, undefined],
          ["fixed", 100, 800, 0, 6966, undefined, undefined],
          ["gradient2", 99, 240, 0, 7014, 3, 1],
          ["aimd", 100, 240, 0, 7006, 2, 1]
        ]
      )
    })
  )

  it.effect(
    "each strategy behaves as designed, the same on every run",
    () =>
      Effect.gen(function* () {
        const result = yield* Overload.run(Overload.defaults)
        const lane = (name: Overload.StrategyName) => result.lanes.find((l) => l.name === name)!
        // Every call arrives in every lane: 200 a second for 60 s, answered, timed out or rejected.
        for (const l of result.lanes) {
          assert.strictEqual(
            l.seconds.reduce((n, s) => n + s.rejected, 0),
            l.summary.rejected
          )
        }
        // Without a limit the dependency collapses within seconds and never comes back: every call
        // waits behind abandoned ones.
        const none = lane("no-limit").seconds
        assert.isTrue(none.slice(3).every((s) => s.goodput === 0 && s.p99 === 1000))
        // The adaptive limits follow the capacity: about half while it is halved, back after.
        for (const name of ["gradient2", "aimd"] as const) {
          const limits = lane(name).seconds.map((s) => s.limit)
          const before = mean(limits.slice(5, 20))
          const halved = mean(limits.slice(25, 40))
          const after = mean(limits.slice(45, 60))
          assert.isBelow(halved, 0.75 * before, name)
          assert.isAbove(after, 1.3 * halved, name)
        }
        // The fixed limit stays where it was set; its calls wait inside the dependency instead.
        assert.isTrue(lane("fixed").seconds.every((s) => s.limit === Overload.defaults.fixedLimit))
        assert.isTrue(
          lane("fixed")
            .seconds.slice(25, 40)
            .every((s) => s.p99 === 800)
        )

        const again = yield* Overload.run(Overload.defaults)
        assert.deepStrictEqual(
          again.lanes.map((l) => l.seconds),
          result.lanes.map((l) => l.seconds)
        )

        // The chart: a panel per strategy and quantity, the capacity dashed red and the deadline
        // dotted dark, each in the legend and in each row, no breaker shading (there is no breaker).
        const outcome = OverloadIncident.outcome(result)
        assert.deepStrictEqual(
          outcome.lanes.map((l) => l.good),
          [false, false, true, true]
        )
        const svg = Svg.render(outcome)
        assert.strictEqual(svg.match(/<polyline /g)?.length, 4 * 4)
        assert.strictEqual(svg.match(/stroke="#d62728" stroke-width="1.5" stroke-dasharray="5 3"/g)?.length, 1 + 4)
        assert.strictEqual(svg.match(/stroke="#333333" stroke-width="1.5" stroke-dasharray="1.5 2.5"/g)?.length, 1 + 4)
        // no-limit's p99 is the deadline, the top of its column: drawn below the panel's top border.
        const ys = [...svg.matchAll(/points="([^"]*)"/g)].flatMap((m) =>
          m[1]!.split(" ").map((p) => Number(p.split(",")[1]))
        )
        assert.strictEqual(Math.min(...ys), 10)
        assert.include(svg, `</tspan> ${outcome.criteria}; <tspan`)
        assert.notInclude(svg, "breaker open")
      }),
    // CPU-bound virtual time, run twice: a few seconds on an idle machine, more on a busy one.
    180_000
  )

  it("reads its flags, and says which is wrong", () => {
    const command = Either.getOrThrow(
      Flags.parse(["--incident", "overload", "--load", "4", "--timeout", "500ms", "--limiters", "aimd"], incidents)
    )
    assert.deepStrictEqual(
      command.incidents.map((i) => i.name),
      ["overload"]
    )
    assert.strictEqual(
      command.incidents[0]!.setup,
      OverloadIncident.describe({ ...Overload.defaults, load: 4, deadlineMillis: 500, strategies: ["aimd"] })
    )
    const message = (argv: Array<string>) => {
      const parsed = Flags.parse(argv, incidents)
      return Either.isLeft(parsed) ? parsed.left.message : "parsed"
    }
    assert.match(message(["--halved-from", "50s", "--halved-to", "30s"]), /^--halved-to: the capacity must halve/)
    assert.match(message(["--limiters", "vegas"]), /^--limiters: unknown name "vegas"/)
    assert.match(message(["--incident", "cache-stall", "--load", "3"]), /^--load: belongs to overload/)
  })
})
