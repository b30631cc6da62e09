/**
 * The scenario runner: open-loop arrivals in virtual time (see world.ts), one fiber per request,
 * and a per-second report.
 *
 * @internal
 */
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import * as Clock from "effect/Clock"
import * as Virtual from "#virtual"
import { InvalidChaosOptions, SloBroken } from "./errors.js"
import { show } from "@circuitry/core/OptionRules"
import * as Rules from "./options.js"
import type { Options, Report, Slo } from "../Scenario.js"
import { Running } from "./running.js"

const invalid = (message: string) => Effect.fail(new InvalidChaosOptions({ message: `Scenario.run: ${message}` }))

/** A turn of the event loop: a timer of 0 ms, which runs after the I/O already waiting. */
const macrotask = Edition.callback<void, never>((resume) => {
  const timer = setTimeout(() => resume(Effect.void), 0)
  return Effect.sync(() => clearTimeout(timer))
})

/** @internal */
export const run = <R>(options: Options<R>): Effect.Effect<Report, InvalidChaosOptions, R> =>
  Effect.gen(function* () {
    const { deadlineMillis, drainMillis, durationMillis, seed, timeoutMillis } = yield* Edition.fromResult(
      Rules.run(options)
    )
    const seconds = Math.ceil(durationMillis / 1000)
    const rates: Array<number> = []
    for (let s = 0; s < seconds; s++) {
      const rate = typeof options.rate === "function" ? options.rate(s) : options.rate
      if (!(typeof rate === "number" && rate >= 0 && Number.isFinite(rate))) {
        return yield* invalid(
          `rate must be a finite number of requests per second, zero or more; in second ${s} it is ${show(rate)}`
        )
      }
      rates.push(rate)
    }
    const metrics = Object.entries(options.counters ?? {})

    const start = yield* Clock.currentTimeMillis
    const caller = yield* Virtual.caller<R>()
    const running = new Running(caller, options.request, {
      start,
      durationMillis,
      seconds,
      rates,
      seed,
      timeoutMillis,
      deadlineMillis,
      drainMillis,
      metrics
    })
    // One virtual second per turn; in between, the caller's other fibers get to run, and every few
    // turns the event loop too (a yield on Effect's timer scheduler), so that a long scenario never
    // holds up the process's I/O (a test runner's messages, say).
    let turns = 0
    const loop: Effect.Effect<void> = Effect.suspend(() =>
      running.turn() ? Effect.void : Effect.andThen(++turns % 8 === 0 ? macrotask : Edition.yieldNow, loop)
    )
    yield* Effect.onInterrupt(loop, () => Effect.sync(() => running.stop()))
    return running.report()
  })

/** @internal */
export const expect = (report: Report, slo: Slo): Effect.Effect<void, SloBroken | InvalidChaosOptions> =>
  Effect.suspend((): Effect.Effect<void, SloBroken | InvalidChaosOptions> => {
    const fail = (message: string) => Effect.fail(new InvalidChaosOptions({ message: `Scenario.expect: ${message}` }))
    const checked = Rules.slo(slo)
    if (Edition.Result.isFailure(checked)) return Effect.fail(Edition.Result.failureOf(checked))
    const { maxFailureRate, maxP99 } = Edition.Result.successOf(checked)
    const counters = Object.entries(slo.maxCounter ?? {})
    for (const [name, limit] of counters) {
      if (!(name in report.total.counters)) {
        const known = Object.keys(report.total.counters)
        return fail(
          `maxCounter names "${name}", which the scenario never counted (${known.length === 0 ? "it counted nothing" : `it counted ${known.map((n) => `"${n}"`).join(", ")}`})`
        )
      }
      if (!(typeof limit === "number" && limit >= 0)) {
        return fail(`maxCounter["${name}"] must be a number of zero or more, got ${show(limit)}`)
      }
    }
    // The first second that breaks a limit, and the first figure in it, in the order above.
    for (const s of report.seconds) {
      const rate = s.calls === 0 ? 0 : s.failures / s.calls
      if (maxFailureRate !== undefined && rate > maxFailureRate) {
        return Effect.fail(
          new SloBroken({ second: s.second, figure: "failureRate", value: rate, limit: maxFailureRate })
        )
      }
      if (maxP99 !== undefined && s.p99 > maxP99) {
        return Effect.fail(new SloBroken({ second: s.second, figure: "p99", value: s.p99, limit: maxP99 }))
      }
      for (const [name, limit] of counters) {
        const value = s.counters[name] ?? 0
        if (value > limit)
          return Effect.fail(new SloBroken({ second: s.second, figure: "counter", counter: name, value, limit }))
      }
    }
    return Effect.void
  })
