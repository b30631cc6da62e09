/**
 * Load scenarios in virtual time: open-loop arrivals at a rate, one fiber per request, a report
 * per second (calls, failures, p50/p99 latency, counters), and SLO checks that name the second
 * and the figure that broke.
 *
 * @since 0.1.0
 */
import type * as Edition from "@circuitry/core/Edition"
import type * as Effect from "effect/Effect"
import type * as Virtual from "#virtual"
import * as errors from "./internal/errors.js"
import * as fault from "./internal/fault.js"
import type * as Chaos from "./Chaos.js"
import * as report from "./internal/report.js"
import * as running from "./internal/running.js"
import * as internal from "./internal/scenario.js"

/**
 * @since 0.1.0
 * @category type ids
 */
export const TypeId: typeof report.TypeId = report.TypeId

/**
 * @since 0.1.0
 * @category type ids
 */
export type TypeId = typeof TypeId

/**
 * What a scenario runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options<R> {
  /** How long requests keep arriving, in scenario time. */
  readonly duration: Edition.DurationInput
  /**
   * Requests per second: a number, or a function of the second (0-based). Open loop: requests
   * arrive on schedule however slowly earlier ones are answered, evenly spaced within a second.
   */
  readonly rate: number | ((second: number) => number)
  /** The request with index `i` (0, 1, 2, ... in order of arrival), run in a fiber of its own. */
  readonly request: (i: number) => Effect.Effect<unknown, unknown, R>
  /** Seeds every fault drawn in the run (request `i` draws from a stream of its own). Default 0. */
  readonly seed?: number | undefined
  /** A request still running after this is interrupted and fails. Default: no limit. */
  readonly timeout?: Edition.DurationInput | undefined
  /**
   * A request answered later than this fails, but is not interrupted: its work still happens, as
   * when a client gives up on a server that carries on. Default: no limit.
   */
  readonly deadline?: Edition.DurationInput | undefined
  /**
   * After the last arrival, how long requests in flight may take to finish; the rest are
   * interrupted and fail. Default `"30 seconds"`.
   */
  readonly drain?: Edition.DurationInput | undefined
  /** Effect `Metric` counters to report: what each gained in each second. */
  readonly counters?: Readonly<Record<string, Counter>> | undefined
}

/**
 * An Effect `Metric` counter, of numbers or bigints, that a scenario can report
 * (`Metric.Metric.Counter` on Effect 3, `Metric.Counter` on Effect 4).
 *
 * @since 0.2.0
 * @category models
 */
export type Counter = Virtual.Counter

/**
 * The figures of one second (or of the whole run). A request belongs to the second it arrived
 * in; latencies are in milliseconds, every request's (failed ones too), nearest-rank percentiles,
 * 0 when the second had no calls.
 *
 * @since 0.1.0
 * @category models
 */
export interface Figures {
  readonly calls: number
  readonly failures: number
  readonly p50: number
  readonly p99: number
  /** Every counter the run counted (with `count` or through `counters`), 0 where it counted none. */
  readonly counters: Readonly<Record<string, number>>
}

/**
 * One second of scenario time.
 *
 * @since 0.1.0
 * @category models
 */
export interface Second extends Figures {
  /** 0-based. */
  readonly second: number
}

/**
 * What a run did: one entry per second of `duration`, and the totals.
 *
 * @since 0.1.0
 * @category models
 */
export interface Report {
  readonly [TypeId]: TypeId
  readonly seed: number
  readonly durationMillis: number
  readonly seconds: ReadonlyArray<Second>
  readonly total: Figures
}

/**
 * Is this a `Report`?
 *
 * @since 0.1.0
 * @category guards
 */
export const isReport: (u: unknown) => u is Report = report.isReport

/**
 * Service-level objectives, checked second by second.
 *
 * @since 0.1.0
 * @category models
 */
export interface Slo {
  /** Failures / calls in any second, 0 to 1. */
  readonly maxFailureRate?: number | undefined
  /** The 99th-percentile latency of any second. */
  readonly maxP99?: Edition.DurationInput | undefined
  /** A counter's count in any second, by name; naming a counter the run never counted is an error. */
  readonly maxCounter?: Readonly<Record<string, number>> | undefined
}

/**
 * An SLO that a second broke: `second` (0-based), the `figure` (`"failureRate"`, `"p99"` or
 * `"counter"`, then `counter` names it), its `value` and the `limit` it broke.
 *
 * @since 0.1.0
 * @category errors
 */
export const SloBroken: typeof errors.SloBroken = errors.SloBroken

/**
 * @since 0.1.0
 * @category errors
 */
export type SloBroken = errors.SloBroken

/**
 * Runs a scenario in virtual time and reports on it. The scenario's fibers read a clock of its
 * own, which starts at the caller's Clock time (0 under a `TestClock`) and jumps to the next
 * thing due whenever every fiber is waiting, so ten minutes of traffic take as long as the work
 * they do. The caller's Clock is not moved; `TestClock.adjust` is not needed (a test that forks
 * the run and adjusts the clock works too). The same seed gives the same report.
 *
 * Everything the requests reach runs in scenario time: services from the context, breakers,
 * caches, `Effect.sleep`, `Effect.timeout`, schedules. (Fibers started outside the scenario, such
 * as a layer's background fibers, keep the caller's clock.)
 *
 * Fails with `InvalidChaosOptions` when an option (or the rate of a second) breaks its rule.
 *
 * @since 0.1.0
 * @category running
 * @example
 * ```ts
 * import { Chaos, Scenario } from "@circuitry/chaos"
 * import { Effect } from "effect"
 *
 * const call = Effect.succeed("ok").pipe(
 *   Chaos.inject(Chaos.latency({ p50: "10 millis", p99: "120 millis" }), Chaos.fail({ rate: 0.01, error: () => "boom" }))
 * )
 * const program = Effect.gen(function* () {
 *   const report = yield* Scenario.run({ duration: "10 minutes", rate: 100, request: () => call, seed: 42 })
 *   yield* Scenario.expect(report, { maxFailureRate: 0.05, maxP99: "500 millis" })
 * })
 * ```
 */
export const run: <R>(options: Options<R>) => Effect.Effect<Report, Chaos.InvalidChaosOptions, R> = internal.run

/**
 * Counts `by` (default 1) on the counter `name` in the current second of the scenario the fiber
 * runs in; does nothing outside a scenario. Put it in the fakes of your dependencies to report
 * what reached them.
 *
 * @since 0.1.0
 * @category counters
 * @example
 * ```ts
 * import { Scenario } from "@circuitry/chaos"
 * import { Effect } from "effect"
 *
 * const query = (sql: string) => Effect.as(Scenario.count("db.queries"), [sql])
 * ```
 */
export const count: (name: string, by?: number) => Effect.Effect<void> = running.count

/**
 * A uniform draw in [0, 1) from the seeded stream of the request the fiber runs for (the stream
 * its faults draw from too), for traffic that varies but is the same in every run of a seed: the
 * key a request asks for, the size of its payload. Outside a scenario it draws from a generator of
 * the process, seeded 0.
 *
 * @since 0.1.0
 * @category random
 * @example
 * ```ts
 * import { Scenario } from "@circuitry/chaos"
 * import { Effect } from "effect"
 *
 * const keys = ["a", "b", "c"]
 * const request = () => Effect.map(Scenario.random, (u) => keys[Math.floor(u * keys.length)]!)
 * ```
 */
export const random: Effect.Effect<number> = fault.random

/**
 * Checks a report against an SLO, second by second: fails with `SloBroken` for the first second
 * that breaks a limit (within a second: failure rate, then p99, then counters in the order given),
 * or with `InvalidChaosOptions` when the SLO is itself wrong (a rate above 1, a counter the run
 * never counted).
 *
 * @since 0.1.0
 * @category checks
 * @example
 * ```ts
 * import { Scenario } from "@circuitry/chaos"
 * import { Effect } from "effect"
 *
 * const check = (report: Scenario.Report) =>
 *   Scenario.expect(report, { maxFailureRate: 0.01, maxP99: "250 millis", maxCounter: { "db.queries": 1_000 } }).pipe(
 *     Effect.catchTag("SloBroken", (broken) => Effect.die(broken.message))
 *   )
 * ```
 */
export const expect: (report: Report, slo: Slo) => Effect.Effect<void, SloBroken | Chaos.InvalidChaosOptions> =
  internal.expect
