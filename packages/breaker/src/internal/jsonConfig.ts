/**
 * A registry's options kept as JSON in a shared place: read (`parse`) and followed (`watch`).
 *
 * A document is checked when it is read, so that a mistake is reported where it was made (the text,
 * its field) rather than later, as a warning when a registry applies it: every field must be one a
 * registry knows, a policy is written by `_tag`, a duration is milliseconds or a string such as
 * `"30 seconds"`, and every breaker option keeps the rule it has in code. What a document cannot
 * know is checked when it is applied: whether the registry takes a `timeout` (its type says).
 */
import * as Edition from "@circuitry/core/Edition"
import * as Runtime from "#runtime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as Ejection from "./ejection.js"
import { InvalidBreakerOptions } from "./errors.js"
import { configsTotal, FIELDS } from "./liveConfig.js"
import * as Options from "./options.js"
import * as Policy from "./policy.js"
import * as Rules from "./rules.js"

/** The breaker options a JSON document can hold (`isFailure` and schedules are code). */
const BREAKER_FIELDS = ["policy", "openFor", "halfOpen", "timeout", "sharing"] as const
const POLICY_TAGS = ["ConsecutiveFailures", "FailureRate"] as const

const quoted = (names: ReadonlyArray<string>) => names.map((n) => JSON.stringify(n)).join(", ")

const unknownField = (input: Readonly<Record<string, unknown>>, known: ReadonlyArray<string>): string | undefined =>
  Object.keys(input).find((key) => !known.includes(key))

/** A policy written as data (`{ "_tag": "ConsecutiveFailures", "threshold": 5 }`) as a `Policy`. */
const policyOf = (path: string, input: unknown): Edition.Result<unknown, string> => {
  const tags = POLICY_TAGS.map((t) => JSON.stringify(t)).join(" or ")
  if (!Rules.isRecord(input)) {
    return Edition.Result.fail(`${path} must be an object with a "_tag" of ${tags}, got ${Rules.show(input)}`)
  }
  switch (input["_tag"]) {
    case "ConsecutiveFailures":
      return Edition.Result.succeed(Policy.consecutiveFailures(input["threshold"] as number))
    case "FailureRate": {
      const { _tag, ...options } = input
      return Edition.Result.succeed(Policy.failureRate(options))
    }
    default:
      return Edition.Result.fail(`${path}._tag must be ${tags}, got ${Rules.show(input["_tag"])}`)
  }
}

/** One object of breaker options at `path` (`defaults`, `overrides["db"]`), checked, its policy made. */
const breakerOptionsOf = (path: string, input: unknown): Edition.Result<Record<string, unknown>, string> =>
  Edition.Result.gen(function* () {
    if (!Rules.isRecord(input)) {
      return yield* Edition.Result.fail(`${path} must be breaker options (an object), got ${Rules.show(input)}`)
    }
    const unknown = unknownField(input, BREAKER_FIELDS)
    if (unknown !== undefined) {
      return yield* Edition.Result.fail(
        `${path} has no field ${JSON.stringify(unknown)}; breaker options in JSON are ${quoted(BREAKER_FIELDS)}`
      )
    }
    const out: Record<string, unknown> = { ...input }
    if (input["policy"] !== undefined) out["policy"] = yield* policyOf(`${path}.policy`, input["policy"])
    // In code openFor may be a Schedule too; in JSON it is a duration, and the message says so.
    if (input["openFor"] !== undefined && Rules.millis(input["openFor"]) === undefined) {
      return yield* Edition.Result.fail(
        `${path}.openFor must be a finite duration >= 0 (milliseconds, or a string such as "30 seconds"), got ${Rules.show(input["openFor"])}`
      )
    }
    yield* Edition.Result.mapError(Options.resolveFields(out, path), (problem) => `${path}.${problem}`)
    return out
  })

const fail = (message: string) => new InvalidBreakerOptions({ message })
const countRejected = Edition.counterSeries(configsTotal, { outcome: "rejected" })

/**
 * Reads and checks a JSON document of registry options: policies as data, by `_tag` (windows are
 * data already). Whether a `timeout` is allowed is the registry's to say, when it applies it.
 *
 * @internal
 */
export const parse = (text: string): Edition.Result<unknown, InvalidBreakerOptions> =>
  Edition.Result.flatMap(
    Edition.Result.try({
      try: () => JSON.parse(text) as unknown,
      catch: (error) => fail(`config must be a JSON document of registry options: ${(error as Error).message}`)
    }),
    (json) =>
      Edition.Result.mapError(
        Edition.Result.gen(function* () {
          if (!Rules.isRecord(json)) {
            return yield* Edition.Result.fail(
              `config must be a JSON object of registry options, got ${Rules.show(json)}`
            )
          }
          const unknown = unknownField(json, FIELDS)
          if (unknown !== undefined) {
            return yield* Edition.Result.fail(
              `config has no field ${JSON.stringify(unknown)}; its fields are ${quoted(FIELDS)}`
            )
          }
          const out: Record<string, unknown> = { ...json }
          if (json["defaults"] !== undefined) out["defaults"] = yield* breakerOptionsOf("defaults", json["defaults"])
          const overrides = json["overrides"]
          if (overrides !== undefined) {
            if (!Rules.isRecord(overrides)) {
              return yield* Edition.Result.fail(
                `overrides must be an object of breaker options by name, got ${Rules.show(overrides)}`
              )
            }
            const byName: Record<string, unknown> = {}
            for (const [name, options] of Object.entries(overrides)) {
              byName[name] = yield* breakerOptionsOf(`overrides[${JSON.stringify(name)}]`, options)
            }
            out["overrides"] = byName
          }
          if (json["maxBreakers"] !== undefined) {
            yield* Rules.check("maxBreakers", Rules.atLeastOne, json["maxBreakers"])
          }
          yield* Ejection.resolveLimit(json["maxOpen"])
          return out as unknown
        }),
        fail
      )
  )

/**
 * Follows a document kept under one key somewhere every member reads (a Redis key, a row): reads
 * it at once and then every `everyMillis`, and emits it when it changed. A key that is gone emits
 * `{}` (the layer's options again); a document that is not JSON or breaks a rule, and a read that
 * fails, are reported (a warning; a read once per outage) and skipped, and the config before stays.
 *
 * @internal
 */
export const watch = <E, R>(
  load: Effect.Effect<Option.Option<string>, E, R>,
  everyMillis: number
): Stream.Stream<unknown, never, R> =>
  Stream.suspend(() => {
    let failing = false
    const read = load.pipe(
      Effect.tap(() =>
        Effect.sync(() => {
          failing = false
        })
      ),
      Effect.map(Option.some),
      (self) =>
        Edition.catchCause(self, (cause) => {
          if (failing) return Effect.succeed(Option.none())
          failing = true
          return Effect.as(
            Effect.logWarning("breaker registry: the config could not be read; the config before stays", cause),
            Option.none()
          )
        })
    )
    return Runtime.repeatEvery(read, everyMillis).pipe(
      Stream.filter(Option.isSome),
      Stream.map((some) => some.value),
      Stream.map((document) => Option.getOrElse(document, () => "{}")),
      Stream.changes,
      Stream.mapEffect((document) =>
        Edition.Result.match(parse(document), {
          onFailure: (error) =>
            Effect.as(
              Effect.logWarning(
                "breaker registry: a config value was rejected; the config before it stays",
                error
              ).pipe(Effect.andThen(Effect.sync(() => countRejected(1)))),
              Option.none<unknown>()
            ),
          onSuccess: (options) => Effect.succeed(Option.some(options))
        })
      ),
      Stream.filter(Option.isSome),
      Stream.map((some) => some.value)
    )
  })
