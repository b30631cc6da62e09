/**
 * The options of the chaos package, checked with the shared rules of `OptionRules`: a schema per
 * options object, decoded once, the first broken rule read as `"<option> must be <rule>, got
 * <value>"`. `Scenario.run`, `Scenario.expect` and `Chaos.layer` fail with it as the package's one
 * options error, `InvalidChaosOptions`; a fault's constructor cannot fail, so it keeps the message
 * as the fault's `problem`, reported when the fault is used (`Chaos.inject`, `Chaos.layer`). The
 * checks across options (a window's end after its start, a p99 at least the p50) follow decoding,
 * in the same words.
 *
 * @internal
 */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Schema from "effect/Schema"
import { InvalidChaosOptions } from "./errors.js"

/** A share of calls. */
const Share = Edition.refine(Schema.Number, (n) => n >= 0 && n <= 1, "a number from 0 to 1")

/** A seed of the generator, which keeps 32 bits. */
const Seed = Edition.refine(
  Schema.Number,
  (n) => Number.isInteger(n) && n >= 0 && n <= 0xffffffff,
  "a whole number from 0 to 4294967295"
)

const aFunction = (what: string) =>
  OptionRules.Is((u): u is (...args: never) => unknown => typeof u === "function", `a function ${what}`)

/**
 * Decodes `input` by `schema`; a broken rule is its message, prefixed by `prefix`. Each of
 * `required` is made present (as undefined when not given): a missing key is then refused by its
 * own rule (`"duration must be a finite duration > 0, got undefined"`), which says more than
 * core's reading of a missing key (`"duration must be given, got undefined"`).
 */
const decode = <A, I>(
  prefix: string,
  schema: OptionRules.Codec<A, I>,
  input: unknown,
  required: ReadonlyArray<string>
): Edition.Result<A, string> => {
  const given = input === undefined ? {} : input
  const present =
    typeof given === "object" && given !== null
      ? Object.assign(
          {},
          given,
          Object.fromEntries(required.map((key) => [key, (given as Record<string, unknown>)[key]]))
        )
      : given
  return OptionRules.decode(schema, present, (message) => `${prefix}${message}`)
}

/** The message of a result's broken rule; undefined when it broke none. */
const problem = <A>(result: Edition.Result<A, string>): string | undefined =>
  Edition.Result.match(result, { onFailure: (message) => message, onSuccess: () => undefined })

/** A result's broken rule as `InvalidChaosOptions`, its message after `where`. */
const failing = <A>(result: Edition.Result<A, string>, where: string): Edition.Result<A, InvalidChaosOptions> =>
  Edition.Result.mapError(result, (message) => new InvalidChaosOptions({ message: `${where}: ${message}` }))

const LatencySchema = Schema.Struct({ latency: OptionRules.FiniteMillis })

/** A fixed latency's milliseconds, or the rule it breaks. @internal */
export const latency = (input: unknown): Edition.Result<number, string> =>
  Edition.Result.map(decode("", LatencySchema, { latency: input }, ["latency"]), (o) => o.latency)

const DistributionSchema = Schema.Struct({ p50: OptionRules.PositiveMillis, p99: OptionRules.FiniteMillis })

/** A latency distribution's percentiles in milliseconds, or the rule they break. @internal */
export const distribution = (input: unknown): Edition.Result<{ readonly p50: number; readonly p99: number }, string> =>
  Edition.Result.flatMap(decode("latency.", DistributionSchema, input, ["p50", "p99"]), (o) =>
    o.p99 >= o.p50
      ? Edition.Result.succeed(o)
      : Edition.Result.fail(
          `latency.p99 must be a finite duration at least p50 (${o.p50} ms), got ${OptionRules.show((input as { readonly p99: unknown }).p99)}`
        )
  )

const FailSchema = Schema.Struct({ rate: Share, error: aFunction("that makes the error") })

/** The rule `Chaos.fail`'s options break, if any. @internal */
export const failProblem = (input: unknown): string | undefined =>
  problem(decode("fail.", FailSchema, input, ["rate", "error"]))

const StallThenFailSchema = Schema.Struct({ error: aFunction("that makes the error") })

/** The rule `Chaos.stallThenFail`'s options break, if any. @internal */
export const stallThenFailProblem = (input: unknown): string | undefined =>
  problem(decode("stallThenFail.", StallThenFailSchema, input, ["error"]))

/** A window's end may be never: `Millis` takes an infinite duration. */
const WindowSchema = Schema.Struct({ from: OptionRules.FiniteMillis, to: OptionRules.Millis })

/** A window of scenario time in milliseconds, or the rule it breaks. @internal */
export const window = (input: unknown): Edition.Result<{ readonly from: number; readonly to: number }, string> =>
  Edition.Result.flatMap(decode("during.", WindowSchema, input, ["from", "to"]), (o) =>
    o.to > o.from
      ? Edition.Result.succeed(o)
      : Edition.Result.fail(
          `during.to must be a duration after during.from (${o.from} ms), got ${OptionRules.show((input as { readonly to: unknown }).to)}`
        )
  )

const LayerSchema = Schema.Struct({ seed: Schema.optional(Seed) })

/** `Chaos.layer`'s seed, checked. @internal */
export const layerSeed = (input: unknown, where: string): Edition.Result<number | undefined, InvalidChaosOptions> =>
  Edition.Result.map(failing(decode("", LayerSchema, input, []), where), (o) => o.seed)

const RunSchema = Schema.Struct({
  duration: OptionRules.PositiveMillis,
  timeout: Schema.optional(Edition.refine(OptionRules.Millis, (ms) => ms > 0, "a duration > 0")),
  deadline: Schema.optional(OptionRules.Millis),
  drain: Schema.optional(OptionRules.FiniteMillis),
  seed: Schema.optional(Seed),
  request: aFunction("of the request's index"),
  rate: Edition.refine(
    Schema.Unknown,
    (u) => typeof u === "function" || (typeof u === "number" && Number.isFinite(u) && u >= 0),
    "a finite number >= 0 (requests per second) or a function of the second"
  )
})

/** `Scenario.run`'s options, in milliseconds. @internal */
export interface Run {
  readonly durationMillis: number
  readonly seed: number
  readonly timeoutMillis: number | undefined
  readonly deadlineMillis: number | undefined
  readonly drainMillis: number
}

/** `Scenario.run`'s options, checked (the rate of each second is checked by the run, which asks for it). @internal */
export const run = (input: unknown): Edition.Result<Run, InvalidChaosOptions> =>
  Edition.Result.map(
    failing(decode("", RunSchema, input, ["duration", "rate", "request"]), "Scenario.run"),
    (o): Run => ({
      durationMillis: o.duration,
      seed: o.seed ?? 0,
      timeoutMillis: o.timeout,
      deadlineMillis: o.deadline,
      drainMillis: o.drain ?? 30_000
    })
  )

const SloSchema = Schema.Struct({
  maxFailureRate: Schema.optional(Share),
  maxP99: Schema.optional(OptionRules.Millis),
  maxCounter: Schema.optional(
    Edition.refine(
      Schema.Unknown,
      (u) => typeof u === "object" && u !== null && !Array.isArray(u),
      "an object of counter names and limits"
    )
  )
})

/** An SLO's limits, checked (its counters' limits are checked against the report, by name). @internal */
export const slo = (
  input: unknown
): Edition.Result<
  { readonly maxFailureRate?: number | undefined; readonly maxP99?: number | undefined },
  InvalidChaosOptions
> => failing(decode("", SloSchema, input, []), "Scenario.expect")
