import * as Edition from "@circuitry/core/Edition"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as FiberSet from "effect/FiberSet"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import type { CacheEntry, CacheStore, WriteOptions } from "../CacheStore.js"
import * as Metrics from "./metrics.js"
import { decodeLayered } from "./options.js"

/** @internal */
export interface Options {
  readonly l2Writes?: "await" | "background" | undefined
  readonly fillTtl?: Edition.DurationInput | undefined
}

/** @internal */
export const make = <E1, E2>(
  l1: CacheStore<E1>,
  l2: CacheStore<E2>,
  options?: Options
): Effect.Effect<CacheStore<E1 | E2>, never, Scope.Scope> =>
  Effect.gen(function* () {
    // `make` cannot fail (API.md): a bad option is a defect naming the option and the rule.
    const resolved = yield* decodeLayered("LayeredStore", options).pipe(
      Effect.mapError((e) => new Error(e.message)),
      Effect.orDie
    )
    const background = resolved.l2Writes === "background"
    const fillCap = resolved.fillTtl ?? Infinity
    // Background L2 writes live in the layer's scope: closing it interrupts what is still running.
    const fibers = yield* FiberSet.make<unknown, never>()
    let closed = false
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
      })
    )

    /**
     * The L1 fill of a read that is still waiting on L2, by key. A write to the key removes it, so
     * an L2 answer older than the write never lands in L1 over the newer value.
     */
    const fills = new Map<string, object>()

    /**
     * Background L2 writes still running, by key. Until they land, L2 may hold an older value than
     * L1, so an L1 miss on such a key is answered as a miss rather than from L2.
     */
    const pending = new Map<string, number>()

    const l2Write = <A>(
      operation: keyof typeof Metrics.l2WriteFailures,
      key: string,
      write: Effect.Effect<A, E2>
    ): Effect.Effect<A | undefined, E2> => {
      if (!background) return write
      const settle = Effect.sync(() => {
        const n = pending.get(key) ?? 1
        if (n <= 1) pending.delete(key)
        else pending.set(key, n - 1)
      })
      const job = Effect.matchCauseEffect(write, {
        onFailure: (cause) => {
          if (Edition.hasInterruptsOnly(cause)) return Effect.void
          Metrics.l2WriteFailures[operation](1)
          return Effect.logWarning(`LayeredStore: background L2 ${operation} of "${key}" failed`, cause)
        },
        onSuccess: () => Effect.void
      }).pipe(Effect.ensuring(settle))
      // Counted and forked in one uninterruptible step, so the count never outlives its fiber.
      const run = Effect.uninterruptible(
        Effect.suspend(() => {
          if (closed) return Effect.void
          pending.set(key, (pending.get(key) ?? 0) + 1)
          // The fork inherits this step's uninterruptibility: give it back, so shutdown can stop it.
          return FiberSet.run(fibers, Effect.interruptible(job))
        })
      )
      return Effect.as(run, undefined)
    }

    const getEntry = (key: string): Effect.Effect<Option.Option<CacheEntry>, E1 | E2> =>
      Effect.flatMap(
        l1.getEntry !== undefined
          ? l1.getEntry(key)
          : Effect.map(
              l1.get(key),
              Option.map((value): CacheEntry => ({ value, ttl: Option.none() }))
            ),
        (hit) => (Option.isSome(hit) ? Effect.succeed(hit) : fromL2(key))
      )

    const fromL2 = (key: string): Effect.Effect<Option.Option<CacheEntry>, E1 | E2> =>
      Effect.suspend(() => {
        if (pending.has(key)) return Effect.succeed(Option.none())
        const token = {}
        fills.set(key, token)
        const release = Effect.sync(() => {
          if (fills.get(key) === token) fills.delete(key)
        })
        return Effect.gen(function* () {
          const start = yield* Clock.currentTimeMillis
          const found = yield* l2.getEntry !== undefined
            ? l2.getEntry(key)
            : Effect.map(
                l2.get(key),
                Option.map((value): CacheEntry => ({ value, ttl: Option.none() }))
              )
          if (Option.isNone(found) || fills.get(key) !== token) return found
          fills.delete(key)
          // The L2 entry expires at the latest `start + ttl`: fill L1 only with what is left of it.
          const now = yield* Clock.currentTimeMillis
          const expiresAt = Option.match(found.value.ttl, {
            onNone: () => Infinity,
            onSome: (ttl) => start + Duration.toMillis(ttl)
          })
          const left = Math.min(expiresAt - now, fillCap)
          if (left <= 0) return Option.none()
          yield* l1.set(key, found.value.value, left === Infinity ? undefined : { ttl: Duration.millis(left) })
          return found
        }).pipe(Effect.ensuring(release))
      })

    const writeBoth = <A>(
      operation: keyof typeof Metrics.l2WriteFailures,
      key: string,
      w1: Effect.Effect<A, E1>,
      w2: Effect.Effect<A, E2>
    ): Effect.Effect<[A, A | undefined], E1 | E2> =>
      Effect.suspend(() => {
        fills.delete(key)
        return Effect.flatMap(w1, (a1) => Effect.map(l2Write(operation, key, w2), (a2): [A, A | undefined] => [a1, a2]))
      })

    const store: CacheStore<E1 | E2> = {
      // The hot path: an L1 hit reads only the value.
      get: (key) =>
        Effect.flatMap(l1.get(key), (hit) =>
          Option.isSome(hit)
            ? Effect.succeed(hit)
            : Effect.map(
                fromL2(key),
                Option.map((entry) => entry.value)
              )
        ),
      getEntry,
      set: (key, value, options?: WriteOptions) =>
        Effect.map(
          writeBoth("set", key, l1.set(key, value, options), l2.set(key, value, options)),
          ([a1, a2]) => a1 && a2 !== false
        ),
      touch: (key, options?: WriteOptions) =>
        Effect.map(
          writeBoth("touch", key, l1.touch(key, options), l2.touch(key, options)),
          ([a1, a2]) => a1 || a2 === true
        ),
      delete: (key) =>
        Effect.map(writeBoth("delete", key, l1.delete(key), l2.delete(key)), ([a1, a2]) => a1 || a2 === true),
      keys: (prefix) => l1.keys(prefix),
      size: l1.size,
      ping: Effect.zipWith(l1.ping, l2.ping, (a, b) => a && b)
    }
    return store
  })
