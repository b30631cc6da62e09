import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as Flags from "../src/Flags.js"
import { incidents } from "../src/incidents.js"
import * as RetryStorm from "../src/retryStorm/RetryStorm.js"
import * as RetryStormIncident from "../src/retryStorm/incident.js"
import * as Svg from "../src/Svg.js"
import { timeoutFor } from "../../../test-support/calibrate.js"

// Virtual time: only the CPU a run takes depends on the machine. Each test's timeout is relative
// to a run of a twentieth of the default traffic, timed on this machine as the file is collected
// (test-support/calibrate.ts): the pins run once, the second test twice.
const SHARE = 20
const oneRun = await timeoutFor(
  () => Effect.runPromise(RetryStorm.run({ ...RetryStorm.defaults, rate: RetryStorm.defaults.rate / SHARE })),
  SHARE
)

describe("the retry-storm replay", () => {
  // The headline figures of docs/incident.md, with the defaults: more load on the failing
  // dependency, more failed requests or a later recovery fails here.
  it.effect(
    "pins the headline figures of the defaults",
    () =>
      Effect.gen(function* () {
        const result = yield* RetryStorm.run(RetryStorm.defaults)
        assert.deepStrictEqual(
          result.lanes.map((l) => [
            l.name,
            Number(l.summary.amplification.toFixed(3)),
            Number(l.summary.peakAmplification.toFixed(3)),
            l.summary.peakAttempts,
            l.summary.failed,
            l.summary.backToNormalMillis
          ]),
          [
            ["plain", 3.998, 4, 800, 11988, 15],
            ["budget", 1.15, 2.075, 415, 11996, 15],
            ["budget+breaker", 0.002, 0.06, 12, 12055, 275]
          ]
        )
      }),
    oneRun
  )

  it.effect(
    "each strategy behaves as designed, the same on every run",
    () =>
      Effect.gen(function* () {
        const result = yield* RetryStorm.run(RetryStorm.defaults)
        const lane = (name: RetryStorm.StrategyName) => result.lanes.find((l) => l.name === name)!
        for (const l of result.lanes) {
          // The same callers everywhere; outside the outage one attempt per request and no failure.
          assert.isTrue(l.seconds.every((s) => s.first === 200))
          for (const s of [...l.seconds.slice(0, 30), ...l.seconds.slice(91)]) {
            assert.deepStrictEqual([s.attempts, s.failed], [200, 0], l.name)
          }
          // In the outage every request fails, whatever the strategy: retries save none of them.
          assert.isTrue(
            l.seconds.slice(31, 89).every((s) => s.failed === 200),
            l.name
          )
        }
        // Plain retries: four attempts per request, every second of the outage.
        assert.isTrue(
          lane("plain")
            .seconds.slice(31, 89)
            .every((s) => s.attempts === 800)
        )
        // The budget: a tenth more, plus its floor of 10 a second.
        // Over the outage (docs/retry.md's bound, with the floor's first full bucket).
        const outage = lane("budget").seconds.slice(30, 90)
        const retries = outage.reduce((n, s) => n + s.attempts - s.first, 0)
        assert.isAtMost(retries, 0.1 * 200 * 60 + 10 * 60 + 10)
        assert.isAbove(retries, 0.1 * 200 * 60)
        // The breaker: open from the first failures, a probe per open time, closed by the first
        // probe after the recovery.
        const transitions = lane("budget+breaker").transitions
        assert.strictEqual(transitions[0]!.to, "Open")
        assert.isAtMost(transitions[0]!.at, 30_100)
        const last = transitions[transitions.length - 1]!
        assert.strictEqual(last.to, "Closed")
        assert.isAtLeast(last.at, 90_000)
        assert.isAtMost(last.at, 90_000 + RetryStorm.defaults.openForMillis)

        const again = yield* RetryStorm.run(RetryStorm.defaults)
        assert.deepStrictEqual(
          again.lanes.map((l) => [l.seconds, l.transitions]),
          result.lanes.map((l) => [l.seconds, l.transitions])
        )

        const outcome = RetryStormIncident.outcome(result)
        assert.deepStrictEqual(
          outcome.lanes.map((l) => l.good),
          [false, true, true]
        )
        const svg = Svg.render(outcome)
        assert.strictEqual(svg.match(/<polyline /g)?.length, 2 * 3)
        assert.include(svg, "first attempts 200/s")
        // The breaker's open episode (its failed probes keep it open): a bar under each of its
        // row's two panels, and once in the legend; no shade over the outage's, so no colour the
        // legend lacks.
        const [episode, ...more] = outcome.lanes[2]!.episodes
        assert.deepStrictEqual(more, [])
        assert.isTrue(episode![0] >= 30 && episode![0] < 30.1 && episode![1] >= 90 && episode![1] <= 95, `${episode}`)
        assert.strictEqual(svg.match(/y="105" width="[\d.]+" height="5" fill="#555555" fill-opacity="0.7"/g)?.length, 2)
        assert.strictEqual(svg.match(/fill="#555555" fill-opacity="0.7"/g)?.length, 1 + 2)
        assert.strictEqual(svg.match(/fill-opacity="0.22"/g)?.length, 1 + 3 * 2) // the outage: legend, every panel
        // What earns the tick is on the chart; the failed requests say how many came after the
        // recovery, where the strategies differ (every request of the outage fails in each).
        assert.include(svg, `</tspan> ${outcome.criteria}; <tspan`)
        assert.strictEqual(outcome.summary.columns[4], "failed requests (after the recovery)")
      }),
    2 * oneRun
  )

  it("reads its flags, and says which is wrong", () => {
    const command = Either.getOrThrow(
      Flags.parse(["--incident", "retry-storm", "--outage", "30s", "--retries", "plain,budget"], incidents)
    )
    assert.strictEqual(
      command.incidents[0]!.setup,
      RetryStormIncident.describe({ ...RetryStorm.defaults, outageMillis: 30_000, strategies: ["plain", "budget"] })
    )
    const parsed = Flags.parse(["--incident", "retry-storm", "--outage", "5m"], incidents)
    assert.isTrue(Either.isLeft(parsed))
    if (Either.isLeft(parsed)) assert.match(parsed.left.message, /^--outage: the outage must end within/)
  })
})
