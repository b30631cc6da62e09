import type * as CacheStore from "@circuitry/cache/CacheStore"
import { CacheError } from "@circuitry/cache/CacheStore"
import * as Cause from "effect/Cause"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import type { Redis } from "ioredis"
import { DEFAULT_URL, failFastOptions, makeClient, messageOf, within } from "./client.js"
import { Deadlines } from "./deadlines.js"

/** @internal */
export class DeadlineExceeded extends Schema.TaggedError<DeadlineExceeded>()("DeadlineExceeded", {
  operation: Schema.String,
  deadlineMillis: Schema.Number
}) {}

/** @internal */
export interface Options {
  readonly url?: string | undefined
  readonly prefix?: string | undefined
  readonly deadline?: Duration.DurationInput | undefined
  readonly liveness?: Duration.DurationInput | undefined
}

/** @internal */
export interface Resolved {
  readonly url: string
  readonly prefix: string
  readonly deadlineMillis: number
  readonly livenessMillis: number
}

const DEFAULT_PREFIX = "circuitry:cache:"
const DEFAULT_DEADLINE_MILLIS = 1_000
const DEFAULT_LIVENESS_MILLIS = 5_000

/**
 * Every value we write starts with this marker, so that a value written under our prefix by
 * something else is recognised and read as a miss instead of being handed to the caller.
 *
 * @internal
 */
export const ENVELOPE = "cy1:"

/** @internal */
export const invalidValues = Metric.counter("circuitry_redis_invalid_values_total", {
  description: "Values under a RedisStore prefix that the store did not write, read as misses"
})

const optionsError = (message: string) => new CacheError({ operation: "options", message })

const positiveMillis = (input: unknown): number | undefined => {
  try {
    const millis = Duration.toMillis(Duration.decode(input as Duration.DurationInput))
    return Number.isFinite(millis) && millis > 0 ? millis : undefined
  } catch {
    return undefined
  }
}

/**
 * Validates the options once, at construction.
 *
 * @internal
 */
export const resolve = (options: Options | undefined): Effect.Effect<Resolved, CacheError> =>
  Effect.suspend(() => {
    if (options !== undefined && (typeof options !== "object" || options === null)) {
      return Effect.fail(optionsError(`options must be an object, got ${typeof options}`))
    }
    const o = options ?? {}
    const url = o.url ?? DEFAULT_URL
    if (typeof url !== "string" || !/^rediss?:\/\//.test(url)) {
      return Effect.fail(optionsError(`url must be a redis:// or rediss:// URL, got ${JSON.stringify(url)}`))
    }
    const prefix = o.prefix ?? DEFAULT_PREFIX
    if (typeof prefix !== "string") {
      return Effect.fail(optionsError(`prefix must be a string, got ${typeof prefix}`))
    }
    const deadlineMillis = o.deadline === undefined ? DEFAULT_DEADLINE_MILLIS : positiveMillis(o.deadline)
    if (deadlineMillis === undefined) {
      return Effect.fail(
        optionsError(`deadline must be a finite duration > 0, got ${JSON.stringify(String(o.deadline))}`)
      )
    }
    const livenessMillis =
      o.liveness === undefined ? Math.max(DEFAULT_LIVENESS_MILLIS, deadlineMillis) : positiveMillis(o.liveness)
    if (livenessMillis === undefined) {
      return Effect.fail(
        optionsError(`liveness must be a finite duration > 0, got ${JSON.stringify(String(o.liveness))}`)
      )
    }
    if (livenessMillis < deadlineMillis) {
      return Effect.fail(
        optionsError(
          `liveness (${livenessMillis} ms) must be at least the deadline (${deadlineMillis} ms): ` +
            "a connection must not be judged dead before one call may time out"
        )
      )
    }
    return Effect.succeed({ url, prefix, deadlineMillis, livenessMillis })
  })

const ttlMillis = (operation: string, ttl: Duration.DurationInput | undefined): number | undefined | CacheError => {
  if (ttl === undefined) return undefined
  const millis = positiveMillis(ttl)
  if (millis === undefined) {
    return new CacheError({
      operation,
      message: `ttl must be a finite duration > 0, got ${JSON.stringify(String(ttl))}`
    })
  }
  return Math.max(1, Math.ceil(millis))
}

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

type Client = Redis & {
  circuitryTouch(key: string, ttl: string): Promise<number>
  circuitryGetEntry(key: string): Promise<[string, number] | null>
}

/**
 * Follows the connection's progress: while any command is in flight, the time since the last
 * reply (or since the oldest pending command was sent) is the connection's silence.
 */
class Liveness {
  inflight = 0
  lastProgress = 0
  constructor(private readonly now: () => number) {}
  sent(): void {
    if (this.inflight++ === 0) this.lastProgress = this.now()
  }
  settled(): void {
    this.inflight--
    this.lastProgress = this.now()
  }
  silence(): number {
    return this.inflight > 0 ? this.now() - this.lastProgress : 0
  }
}

/** @internal */
export const isDeadlineExceeded = (error: CacheError): boolean => error.cause instanceof DeadlineExceeded

/**
 * A store over a connected client. The client is not released here: its owner does that.
 *
 * @internal
 */
export const makeWith = (
  redis: Redis,
  resolved: Omit<Resolved, "url">
): Effect.Effect<CacheStore.CacheStore<CacheError>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const client = redis as Client
    if (typeof client.circuitryTouch !== "function") {
      client.defineCommand("circuitryTouch", { numberOfKeys: 1, lua: TOUCH })
      client.defineCommand("circuitryGetEntry", { numberOfKeys: 1, lua: GET_ENTRY })
    }
    const { deadlineMillis, livenessMillis, prefix } = resolved
    const clock = yield* Effect.clock
    const liveness = new Liveness(() => clock.unsafeCurrentTimeMillis())

    // The watchdog: silence past `liveness` means the connection is dead even if TCP says
    // otherwise. Tearing it down fails the callers still waiting (ioredis flushes its queue) and
    // ioredis reconnects in the background.
    const interval = Duration.millis(Math.max(5, Math.floor(livenessMillis / 4)))
    yield* Effect.sleep(interval).pipe(
      Effect.zipRight(
        Effect.suspend(() => {
          const silence = liveness.silence()
          if (silence < livenessMillis) return Effect.void
          liveness.lastProgress = clock.unsafeCurrentTimeMillis()
          client.disconnect(true)
          return Effect.logWarning(
            `RedisStore: no reply for ${silence} ms (liveness ${livenessMillis} ms): connection torn down, reconnecting`
          )
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )

    const deadlines = yield* Deadlines.make(deadlineMillis)
    /**
     * One call: its own deadline, which fails only this caller. The command stays in ioredis's
     * queue when the deadline passes, so its late reply is matched to it (and dropped) and never
     * to the next command on the connection.
     */
    const call = <A>(operation: string, send: () => Promise<A>): Effect.Effect<A, CacheError> =>
      Effect.async<A, CacheError>((resume) => {
        let promise: Promise<A>
        try {
          promise = send()
        } catch (e) {
          resume(Effect.fail(new CacheError({ operation, message: messageOf(e), cause: e })))
          return
        }
        let settled = false
        const cancel = deadlines.start(() => {
          if (settled) return
          settled = true
          resume(
            Effect.fail(
              new CacheError({
                operation,
                message: `no reply within the deadline of ${deadlineMillis} ms`,
                cause: new DeadlineExceeded({ operation, deadlineMillis })
              })
            )
          )
        })
        liveness.sent()
        promise.then(
          (a) => {
            liveness.settled()
            if (settled) return // abandoned: the caller has its timeout, the reply goes nowhere
            settled = true
            cancel()
            resume(Effect.succeed(a))
          },
          (e) => {
            liveness.settled()
            if (settled) return
            settled = true
            cancel()
            resume(Effect.fail(new CacheError({ operation, message: messageOf(e), cause: e })))
          }
        )
        return Effect.sync(cancel)
      })

    const invalid = <A>(key: string, message: string, cause?: unknown): Effect.Effect<Option.Option<A>> => {
      const error = new CacheError({ operation: "get", message: `key "${key}": ${message}`, cause })
      return Effect.logWarning("RedisStore: a value that is not ours was read as a miss", Cause.fail(error)).pipe(
        Effect.zipRight(Metric.increment(invalidValues)),
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

    const get = (key: string): Effect.Effect<Option.Option<string>, CacheError> =>
      call("get", () => client.get(prefix + key)).pipe(
        Effect.flatMap((raw) => unwrap(key, raw, (value) => value)),
        wrongType(key)
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
        const ttl = ttlMillis("set", options?.ttl)
        if (ttl instanceof CacheError) return Effect.fail(ttl)
        const stored = ENVELOPE + value
        return call("set", () =>
          ttl === undefined ? client.set(prefix + key, stored) : client.set(prefix + key, stored, "PX", ttl)
        ).pipe(Effect.map((reply) => reply === "OK"))
      })

    const touch = (key: string, options?: CacheStore.WriteOptions): Effect.Effect<boolean, CacheError> =>
      Effect.suspend(() => {
        const ttl = ttlMillis("touch", options?.ttl)
        if (ttl instanceof CacheError) return Effect.fail(ttl)
        return call("touch", () => client.circuitryTouch(prefix + key, ttl === undefined ? "" : String(ttl))).pipe(
          Effect.map((n) => n === 1)
        )
      })

    const del = (key: string): Effect.Effect<boolean, CacheError> =>
      call("delete", () => client.del(prefix + key)).pipe(Effect.map((n) => n > 0))

    /** Every key under our prefix that starts with `sub`, by SCAN: never KEYS, which blocks the server. */
    const scan = (operation: string, sub: string): Effect.Effect<ReadonlyArray<string>, CacheError> =>
      call(operation, async () => {
        const match = globEscape(prefix + sub) + "*"
        const found = new Set<string>()
        let cursor = "0"
        do {
          const [next, batch] = await client.scan(cursor, "MATCH", match, "COUNT", 1000)
          for (const k of batch) found.add(k.slice(prefix.length))
          cursor = next
        } while (cursor !== "0")
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

/**
 * Connects a client owned by the scope: a failed connection is a `CacheError`, and closing the
 * scope closes the connection (at once: no QUIT round trip that a stalled server could hold up).
 *
 * @internal
 */
export const acquireClient = (url: string): Effect.Effect<Redis, CacheError, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = makeClient(url, failFastOptions)
        try {
          await within(client.connect(), failFastOptions.connectTimeout ?? 2_000)
          return client
        } catch (e) {
          client.disconnect()
          throw e
        }
      },
      catch: (e) =>
        new CacheError({ operation: "connect", message: `cannot connect to ${url}: ${messageOf(e)}`, cause: e })
    }),
    (client) => Effect.sync(() => client.disconnect())
  )

/** @internal */
export const make = (options?: Options): Effect.Effect<CacheStore.CacheStore<CacheError>, CacheError, Scope.Scope> =>
  Effect.gen(function* () {
    const resolved = yield* resolve(options)
    const client = yield* acquireClient(resolved.url)
    return yield* makeWith(client, resolved)
  })
