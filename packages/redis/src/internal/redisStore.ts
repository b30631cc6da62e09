import type * as CacheStore from "@circuitry/cache/CacheStore"
import { CacheError, invalidTtl, ttlMillis } from "@circuitry/cache/CacheStore"
import * as Edition from "@circuitry/core/Edition"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import { Cluster } from "ioredis"
import {
  acquire,
  type Client as Connected,
  connect,
  connectFailureOf,
  describe,
  failFastOptions,
  within
} from "./client.js"
import { writeCoalescer } from "./coalesce.js"
import * as Connection from "./connection.js"
import * as options from "./options.js"

/** @internal */
export type Resolved = options.Resolved

const DEFAULT_PREFIX = "circuitry:cache:"

/**
 * Validates the options once, at construction.
 *
 * @internal
 */
export const resolve = (o: options.Options | undefined): Effect.Effect<Resolved, options.InvalidRedisOptions> =>
  options.resolve(o, DEFAULT_PREFIX)

/**
 * Every value we write starts with this marker, so that a value written under our prefix by
 * something else is recognised and read as a miss instead of being handed to the caller.
 *
 * @internal
 */
export const ENVELOPE = "cy1:"

/** @internal */
export const invalidValues: Edition.Counter = MetricSeries.counter({
  name: "circuitry_redis_invalid_values_total",
  description: "Values under a RedisStore prefix that the store did not write, read as misses"
})
const countInvalidValue = Edition.counterSeries(invalidValues, {})

/**
 * A write's TTL under the one rule of every CacheStore (`CacheStore.ttlMillis`), as Redis takes it:
 * `undefined` for no expiry, 0 for "already expired", else whole milliseconds (rounded up).
 */
const ttlOf = (operation: string, ttl: Edition.DurationInput | undefined): Effect.Effect<number | undefined> =>
  Effect.suspend(() => {
    const millis = ttlMillis(ttl)
    if (millis === undefined) return Edition.dieMessage(invalidTtl(`RedisStore.${operation}`, ttl))
    if (millis === Infinity) return Effect.succeed(undefined)
    return Effect.succeed(millis <= 0 ? 0 : Math.max(1, Math.ceil(millis)))
  })

const isOk = (reply: unknown): boolean => reply === "OK"

const globEscape = (s: string): string => s.replace(/[*?[\]\\]/g, "\\$&")

// touch: renew the expiry of a key that exists, or make it live forever when no ttl is given.
const TOUCH = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == '' then redis.call('PERSIST', KEYS[1]) else redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return 1`

// getEntry: the value and its time left, read in one step.
const GET_ENTRY = `
local value = redis.call('GET', KEYS[1])
if not value then return false end
return { value, redis.call('PTTL', KEYS[1]) }`

type Client = Connected & {
  circuitryTouch(key: string, ttl: string): Promise<number>
  circuitryGetEntry(key: string): Promise<[string, number] | null>
}

/** @internal */
export const isDeadlineExceeded = (error: CacheError): boolean => error.cause instanceof Connection.DeadlineExceeded

/**
 * A store over a connected client. The client is not released here: its owner does that.
 *
 * @internal
 */
export const makeWith = (
  redis: Connected,
  resolved: Omit<Resolved, "target">
): Effect.Effect<CacheStore.CacheStore<CacheError>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const client = redis as Client
    if (typeof client.circuitryTouch !== "function") {
      client.defineCommand("circuitryTouch", { numberOfKeys: 1, lua: TOUCH })
      client.defineCommand("circuitryGetEntry", { numberOfKeys: 1, lua: GET_ENTRY })
    }
    const { prefix } = resolved
    const connection = yield* Connection.make(
      client,
      { name: "RedisStore", deadlineMillis: resolved.deadlineMillis, livenessMillis: resolved.livenessMillis },
      (operation, message, cause) => new CacheError({ operation, message, cause })
    )
    // The commands of one event-loop turn (many fibers calling at once) go out in one write.
    const coalesce = writeCoalescer(client)
    const call = <A>(operation: string, send: () => Promise<A>): Effect.Effect<A, CacheError> =>
      connection.call(operation, () => {
        coalesce()
        return send()
      })

    const invalid = <A>(key: string, message: string, cause?: unknown): Effect.Effect<Option.Option<A>> => {
      const error = new CacheError({ operation: "get", message: `key "${key}": ${message}`, cause })
      return Effect.logWarning("RedisStore: a value that is not ours was read as a miss", Cause.fail(error)).pipe(
        Effect.andThen(Effect.sync(() => countInvalidValue(1))),
        Effect.as(Option.none<A>())
      )
    }

    /** Our value out of what is stored, or a miss with a reported error when it is not ours. */
    const unwrap = <A>(
      key: string,
      raw: string | null,
      found: (value: string) => A
    ): Effect.Effect<Option.Option<A>> => {
      if (raw === null) return Effect.succeed(Option.none())
      if (!raw.startsWith(ENVELOPE)) return invalid(key, "the stored value was not written by RedisStore")
      return Effect.succeed(Option.some(found(raw.slice(ENVELOPE.length))))
    }
    const wrongType =
      <A>(key: string) =>
      (self: Effect.Effect<Option.Option<A>, CacheError>): Effect.Effect<Option.Option<A>, CacheError> =>
        Effect.catchIf(
          self,
          (e) => e.message.startsWith("WRONGTYPE"),
          (e) => invalid<A>(key, "the key holds a value of another Redis type", e)
        )

    // One frame per call on the hot path: the reply and the WRONGTYPE failure are read in one match.
    const get = (key: string): Effect.Effect<Option.Option<string>, CacheError> =>
      Effect.matchEffect(
        call("get", () => client.get(prefix + key)),
        {
          onFailure: (e) =>
            e.message.startsWith("WRONGTYPE")
              ? invalid<string>(key, "the key holds a value of another Redis type", e)
              : Effect.fail(e),
          onSuccess: (raw) =>
            raw !== null && raw.startsWith(ENVELOPE)
              ? Effect.succeed(Option.some(raw.slice(ENVELOPE.length)))
              : unwrap(key, raw, (value) => value)
        }
      )

    const getEntry = (key: string): Effect.Effect<Option.Option<CacheStore.CacheEntry>, CacheError> =>
      call("getEntry", () => client.circuitryGetEntry(prefix + key)).pipe(
        Effect.flatMap((reply) =>
          unwrap(key, reply === null ? null : reply[0], (value) => ({
            value,
            ttl: reply !== null && reply[1] >= 0 ? Option.some(Duration.millis(reply[1])) : Option.none()
          }))
        ),
        wrongType(key)
      )

    const set = (key: string, value: string, options?: CacheStore.WriteOptions): Effect.Effect<boolean, CacheError> =>
      Effect.suspend(() => {
        if (typeof value !== "string") {
          return Effect.fail(
            new CacheError({ operation: "set", message: `value must be a string, got ${typeof value}` })
          )
        }
        const stored = ENVELOPE + value
        // The TTL rule of every CacheStore (`ttlMillis`), read without an Effect of its own.
        const ttl = options?.ttl === undefined ? Infinity : ttlMillis(options.ttl)
        if (ttl === undefined) return Edition.dieMessage(invalidTtl("RedisStore.set", options?.ttl))
        if (ttl === Infinity)
          return Effect.map(
            call("set", () => client.set(prefix + key, stored)),
            isOk
          )
        // Already expired: nothing is stored, and the value it meant to replace is gone too.
        if (ttl <= 0)
          return Effect.as(
            call("set", () => client.del(prefix + key)),
            false
          )
        const px = Math.max(1, Math.ceil(ttl))
        return Effect.map(
          call("set", () => client.set(prefix + key, stored, "PX", px)),
          isOk
        )
      })

    // A ttl of 0 is PEXPIRE 0, which removes the key (and answers 1 when it existed).
    const touch = (key: string, options?: CacheStore.WriteOptions): Effect.Effect<boolean, CacheError> =>
      Effect.flatMap(ttlOf("touch", options?.ttl), (ttl) =>
        call("touch", () => client.circuitryTouch(prefix + key, ttl === undefined ? "" : String(ttl))).pipe(
          Effect.map((n) => n === 1)
        )
      )

    const del = (key: string): Effect.Effect<boolean, CacheError> =>
      call("delete", () => client.del(prefix + key)).pipe(Effect.map((n) => n > 0))

    /**
     * Every key under our prefix that starts with `sub`, by SCAN: never KEYS, which blocks the
     * server. On a cluster, every primary is scanned (each holds its own slots' keys).
     */
    const scan = (operation: string, sub: string): Effect.Effect<ReadonlyArray<string>, CacheError> =>
      call(operation, async () => {
        const match = globEscape(prefix + sub) + "*"
        const found = new Set<string>()
        const servers = client instanceof Cluster ? client.nodes("master") : [client]
        await Promise.all(
          servers.map(async (server) => {
            let cursor = "0"
            do {
              const [next, batch] = await server.scan(cursor, "MATCH", match, "COUNT", 1000)
              for (const k of batch) found.add(k.slice(prefix.length))
              cursor = next
            } while (cursor !== "0")
          })
        )
        return Array.from(found)
      })

    return {
      get,
      getEntry,
      set,
      touch,
      delete: del,
      keys: (sub) => scan("keys", sub ?? ""),
      size: Effect.map(scan("size", ""), (keys) => keys.length),
      ping: call("ping", () => client.ping()).pipe(Effect.map((reply) => reply === "PONG"))
    } satisfies CacheStore.CacheStore<CacheError>
  })

/** How long startup waits (real time) for the server before going on without it. */
const STARTUP_WAIT_MILLIS = 1_000

/**
 * A client owned by the scope, closed with it (at once: no QUIT round trip that a stalled server
 * could hold up). A cache is degraded, not broken, without its server: startup waits a little for
 * the first connection, then goes on without it (a warning is logged); calls fail fast until
 * ioredis has connected in the background, which it keeps trying.
 *
 * @internal
 */
export const acquireClient = (target: options.Target): Effect.Effect<Connected, never, Scope.Scope> =>
  acquire(target, failFastOptions, "commands").pipe(
    Effect.tap((client) =>
      Effect.promise(() =>
        within(connect(client), STARTUP_WAIT_MILLIS).then(
          () => undefined,
          (e: unknown) => connectFailureOf(client, e)
        )
      ).pipe(
        Effect.flatMap((problem) =>
          problem === undefined
            ? Effect.void
            : Effect.logWarning(
                `RedisStore: cannot connect to ${describe(target)} (${problem}); the store starts without it and connects when it is back`
              )
        )
      )
    )
  )

/** @internal */
export const make = (
  o?: options.Options
): Effect.Effect<CacheStore.CacheStore<CacheError>, options.InvalidRedisOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = yield* resolve(o)
    const client = yield* acquireClient(resolved.target)
    return yield* makeWith(client, resolved)
  })
