/**
 * The options of every Redis adapter, checked once at construction with the shared rules of
 * `OptionRules` into the package's one options error. Where Redis is (`url`, `cluster`) is checked
 * by hand in the same words (`"<option> must be <rule>, got <value>"`), so that no schema of this
 * package differs between Effect majors.
 */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
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
  readonly deadline?: Edition.DurationInput | undefined
  /** @deprecated the old name of `deadline` (RedisBreakerStore, RedisRetryBudget) */
  readonly timeout?: Edition.DurationInput | undefined
  readonly liveness?: Edition.DurationInput | undefined
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

const URL_RULE = "a redis:// or rediss:// URL"
const NODE_RULE = "a redis:// URL or { host, port } with a port in 1..65535"
const CLUSTER_RULE = "an ioredis Cluster, or a non-empty array of its nodes (redis:// URLs or { host, port })"

const isUrl = (u: unknown): u is string => typeof u === "string" && /^rediss?:\/\//.test(u)

const isNode = (u: unknown): u is ClusterNode => {
  if (isUrl(u)) return true
  if (typeof u !== "object" || u === null) return false
  const { host, port } = u as { readonly host?: unknown; readonly port?: unknown }
  return (
    typeof host === "string" &&
    host.length > 0 &&
    Number.isInteger(port) &&
    (port as number) >= 1 &&
    (port as number) <= 65_535
  )
}

const refuse = <E>(error: (message: string) => E, option: string, rule: string, input: unknown): E =>
  error(`${option} must be ${rule}, got ${OptionRules.show(input)}`)

/**
 * `url` and `cluster` checked together, for every adapter: `cluster` is one Cluster or its nodes,
 * and giving both is an error (which one would the adapter use?).
 *
 * @internal
 */
export const resolveTarget = <E>(o: unknown, error: (message: string) => E): Edition.Result<Target, E> => {
  if (o === undefined) o = {}
  if (typeof o !== "object" || o === null) return Edition.Result.fail(refuse(error, "options", "an object", o))
  const { cluster, url } = o as { readonly url?: unknown; readonly cluster?: unknown }
  if (url !== undefined && !isUrl(url)) return Edition.Result.fail(refuse(error, "url", URL_RULE, url))
  if (cluster === undefined) return Edition.Result.succeed({ _tag: "Server", url: url ?? DEFAULT_URL })
  if (!(cluster instanceof Cluster)) {
    if (!Array.isArray(cluster) || cluster.length === 0) {
      return Edition.Result.fail(refuse(error, "cluster", CLUSTER_RULE, cluster))
    }
    const bad = cluster.findIndex((node) => !isNode(node))
    if (bad >= 0) return Edition.Result.fail(refuse(error, `cluster.${bad}`, NODE_RULE, cluster[bad]))
  }
  if (url !== undefined) {
    return Edition.Result.fail(error("url and cluster are two ways to say where Redis is: give only one"))
  }
  return Edition.Result.succeed(
    cluster instanceof Cluster
      ? { _tag: "Cluster", cluster }
      : { _tag: "Nodes", nodes: cluster as ReadonlyArray<ClusterNode> }
  )
}

const DeadlineSchema = Schema.Struct({
  deadline: Schema.optional(OptionRules.PositiveMillis),
  timeout: Schema.optional(OptionRules.PositiveMillis)
})

const OptionsSchema = Schema.Struct({
  prefix: Schema.optional(OptionRules.Text),
  deadline: Schema.optional(OptionRules.PositiveMillis),
  timeout: Schema.optional(OptionRules.PositiveMillis),
  liveness: Schema.optional(OptionRules.PositiveMillis)
})

/** `deadline`, or `timeout` (its deprecated old name), or the default; giving both is an error. */
const pickDeadline = <E>(
  o: { readonly deadline?: number | undefined; readonly timeout?: number | undefined },
  defaultMillis: number,
  error: (message: string) => E
): Edition.Result<number, E> =>
  o.deadline !== undefined && o.timeout !== undefined
    ? Edition.Result.fail(error("deadline and timeout (its deprecated old name) are one option: give only deadline"))
    : Edition.Result.succeed(o.deadline ?? o.timeout ?? defaultMillis)

/**
 * One call's limit in milliseconds, for an adapter whose other options are checked elsewhere
 * (`RedisRetryBudget`): `deadline`, or `timeout` (its deprecated old name), or `defaultMillis`.
 *
 * @internal
 */
export const resolveDeadline = <E>(
  o: unknown,
  defaultMillis: number,
  error: (message: string) => E
): Edition.Result<number, E> =>
  Edition.Result.flatMap(OptionRules.decode(DeadlineSchema, o, error), (decoded) =>
    pickDeadline(decoded, defaultMillis, error)
  )

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
): Effect.Effect<Resolved, InvalidRedisOptions> =>
  Effect.gen(function* () {
    const o = yield* Edition.fromResult(OptionRules.decode(OptionsSchema, options, invalid))
    const deadlineMillis = yield* Edition.fromResult(pickDeadline(o, DEFAULT_DEADLINE_MILLIS, invalid))
    const livenessMillis = o.liveness ?? Math.max(DEFAULT_LIVENESS_MILLIS, deadlineMillis)
    const target = yield* Edition.fromResult(resolveTarget(options, invalid))
    if (livenessMillis < deadlineMillis) {
      return yield* invalid(
        `liveness (${livenessMillis} ms) must be at least the deadline (${deadlineMillis} ms): ` +
          "a connection must not be judged dead before one call may time out"
      )
    }
    return { target, prefix: o.prefix ?? defaultPrefix, deadlineMillis, livenessMillis }
  })
