/**
 * A store for tests: a real MemoryStore behind switches. It counts the calls that reach it, can
 * fail every call (`failing`) or the next few (`failNext`), and can take time (on the Effect
 * Clock) before it answers. `inner` reads the data directly, bypassing everything.
 */
import type { CacheStore } from "@circuitry/cache"
import { CacheStore as CS, MemoryStore } from "@circuitry/cache"
import type * as Edition from "@circuitry/core/Edition"
import { Effect } from "effect"

export type Operation = "get" | "getEntry" | "set" | "touch" | "delete" | "keys" | "size" | "ping"

export interface TestStore extends CacheStore.CacheStore<CacheStore.CacheError> {
  readonly inner: CacheStore.CacheStore<never>
  readonly calls: Record<Operation, number>
  /** Every call that reached the store. */
  readonly total: () => number
  /** Calls interrupted while they were running. */
  interrupted: number
  failing: boolean
  failNext: number
  /** How long each call takes before it reaches the data (and then answers, or fails). */
  delay: Partial<Record<Operation, Edition.DurationInput>>
  /** How long each answer takes to come back after the data was read or written. */
  delayAfter: Partial<Record<Operation, Edition.DurationInput>>
}

export const makeTestStore = (options?: { readonly getEntry?: boolean }): Effect.Effect<TestStore> =>
  Effect.gen(function* () {
    const inner = yield* Effect.orDie(MemoryStore.make())
    const calls: Record<Operation, number> = {
      get: 0,
      getEntry: 0,
      set: 0,
      touch: 0,
      delete: 0,
      keys: 0,
      size: 0,
      ping: 0
    }
    const store: TestStore = {
      inner,
      calls,
      total: () => Object.values(calls).reduce((a, b) => a + b, 0),
      interrupted: 0,
      failing: false,
      failNext: 0,
      delay: {},
      delayAfter: {},
      get: (key) => call("get", inner.get(key)),
      set: (key, value, options) => call("set", inner.set(key, value, options)),
      touch: (key, options) => call("touch", inner.touch(key, options)),
      delete: (key) => call("delete", inner.delete(key)),
      keys: (prefix) => call("keys", inner.keys(prefix)),
      get size() {
        return call("size", inner.size)
      },
      get ping() {
        return call("ping", inner.ping)
      },
      ...(options?.getEntry === false ? {} : { getEntry: (key: string) => call("getEntry", inner.getEntry!(key)) })
    }
    const call = <A>(operation: Operation, effect: Effect.Effect<A>): Effect.Effect<A, CacheStore.CacheError> =>
      Effect.suspend(() => {
        calls[operation]++
        const delay = store.delay[operation]
        const answer = Effect.suspend(() => {
          if (store.failing || store.failNext > 0) {
            if (store.failNext > 0) store.failNext--
            return Effect.fail(new CS.CacheError({ operation, message: "connection refused" }))
          }
          return effect
        })
        const after = store.delayAfter[operation]
        const answered = after === undefined ? answer : Effect.tap(answer, () => Effect.sleep(after))
        return (delay === undefined ? answered : Effect.andThen(Effect.sleep(delay), answered)).pipe(
          Effect.onInterrupt(() =>
            Effect.sync(() => {
              store.interrupted++
            })
          )
        )
      })
    return store
  })
