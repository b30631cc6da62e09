/**
 * The options of both Redis adapters, checked once at construction with the shared rules of
 * `OptionRules` (Effect Schema) into the package's one options error.
 */
import { OptionRules } from "@circuitry/breaker"
import type * as Duration from "effect/Duration"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { Cluster } from "ioredis"
import { DEFAULT_URL } from "./client.js"

/** @internal */
export class InvalidRedisOptions extends Schema.TaggedError<InvalidRedisOptions>()("InvalidRedisOptions", {
  message: Schema.String
}) {}

/** @internal */
export interface Options {
  readonly url?: string | undefined
  readonly cluster?: ClusterOption | undefined
  readonly prefix?: string | undefined
  readonly deadline?: Duration.DurationInput | undefined
  /** @deprecated the old name of `deadline` (RedisBreakerStore) */
  readonly timeout?: Duration.DurationInput | undefined
  readonly liveness?: Duration.DurationInput | undefined
}

/** A Redis Cluster node: a redis:// URL, or a host and port. @internal */
export type ClusterNode = string | { readonly host: string; readonly port: number }

/** An ioredis `Cluster` (its owner's), or the nodes to reach one on. @internal */
export type ClusterOption = Cluster | ReadonlyArray<ClusterNode>

/**
 * Where the adapter's connections go: one server, a Redis Cluster found from its nodes (the
 * connections are the store's), or a `Cluster` the application owns.
 *
 * @internal
 */
export type Target =
  | { readonly _tag: "Server"; readonly url: string }
  | { readonly _tag: "Nodes"; readonly nodes: ReadonlyArray<ClusterNode> }
  | { readonly _tag: "Cluster"; readonly cluster: Cluster }

/** @internal */
export interface Resolved {
  readonly target: Target
  readonly prefix: string
  readonly deadlineMillis: number
  readonly livenessMillis: number
}

const DEFAULT_DEADLINE_MILLIS = 1_000
const DEFAULT_LIVENESS_MILLIS = 5_000

const Url = Schema.String.pipe(
  Schema.pattern(/^rediss?:\/\//, { message: () => "a redis:// or rediss:// URL" })
).annotations({ message: () => "a redis:// or rediss:// URL" })

const Node = Schema.Union(
  Url,
  Schema.Struct({
    host: Schema.String.pipe(Schema.minLength(1)),
    port: Schema.Int.pipe(Schema.between(1, 65_535))
  })
).annotations({ message: () => "a redis:// URL or { host, port } with a port in 1..65535" })

const ClusterSchema = Schema.Union(
  Schema.declare((u): u is Cluster => u instanceof Cluster),
  Schema.Array(Node).pipe(Schema.minItems(1))
).annotations({
  message: () => "an ioredis Cluster, or a non-empty array of its nodes (redis:// URLs or { host, port })"
})

/**
 * `url` and `cluster` checked together, for every adapter: `cluster` is one Cluster or its nodes,
 * and giving both is an error (which one would the adapter use?).
 *
 * @internal
 */
export const resolveTarget = <E>(
  o: { readonly url?: unknown; readonly cluster?: unknown } | undefined,
  error: (message: string) => E
): Either.Either<Target, E> =>
  Either.flatMap(
    OptionRules.decode(
      Schema.Struct({ url: Schema.optional(Url), cluster: Schema.optional(ClusterSchema) }),
      o === undefined ? undefined : { url: o.url, cluster: o.cluster },
      error
    ),
    ({ cluster, url }): Either.Either<Target, E> => {
      if (cluster === undefined) return Either.right({ _tag: "Server", url: url ?? DEFAULT_URL })
      if (url !== undefined) {
        return Either.left(error("url and cluster are two ways to say where Redis is: give only one"))
      }
      return Either.right(cluster instanceof Cluster ? { _tag: "Cluster", cluster } : { _tag: "Nodes", nodes: cluster })
    }
  )

const OptionsSchema = Schema.Struct({
  prefix: Schema.optional(OptionRules.Text),
  deadline: Schema.optional(OptionRules.PositiveMillis),
  timeout: Schema.optional(OptionRules.PositiveMillis),
  liveness: Schema.optional(OptionRules.PositiveMillis)
})

const invalid = (message: string) => new InvalidRedisOptions({ message })

/**
 * Validates the options once, at construction. `liveness` defaults to 5 seconds, and never less
 * than the deadline.
 *
 * @internal
 */
export const resolve = (
  options: Options | undefined,
  defaultPrefix: string
): Either.Either<Resolved, InvalidRedisOptions> =>
  Either.flatMap(OptionRules.decode(OptionsSchema, options, invalid), (o) => {
    if (o.deadline !== undefined && o.timeout !== undefined) {
      return Either.left(invalid("deadline and timeout (its deprecated old name) are one option: give only deadline"))
    }
    const deadlineMillis = o.deadline ?? o.timeout ?? DEFAULT_DEADLINE_MILLIS
    const livenessMillis = o.liveness ?? Math.max(DEFAULT_LIVENESS_MILLIS, deadlineMillis)
    const target = resolveTarget(options, invalid)
    if (Either.isLeft(target)) return Either.left(target.left)
    if (livenessMillis < deadlineMillis) {
      return Either.left(
        invalid(
          `liveness (${livenessMillis} ms) must be at least the deadline (${deadlineMillis} ms): ` +
            "a connection must not be judged dead before one call may time out"
        )
      )
    }
    return Either.right({
      target: target.right,
      prefix: o.prefix ?? defaultPrefix,
      deadlineMillis,
      livenessMillis
    })
  })
