import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CacheEntry, CacheStore, WriteOptions } from "../CacheStore.js"
import { invalidTtl, ttlMillis } from "./ttl.js"

interface Entry {
  value: string
  /** Epoch millis on the Effect Clock; `Infinity` when the entry never expires. */
  expiresAt: number
}

/**
 * A `Map` keeps insertion order, so re-inserting a key on every use makes its first key the least
 * recently used one: LRU without a linked list. Expired entries are dropped when they are met
 * (read, written, listed, counted); they never come back as values.
 *
 * @internal
 */
export const make = (capacity: number): CacheStore<never> => {
  const entries = new Map<string, Entry>()

  const live = (key: string, now: number): Entry | undefined => {
    const entry = entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= now) {
      entries.delete(key)
      return undefined
    }
    return entry
  }

  /**
   * Marks an entry as the most recently used. Only a bounded store needs the order, and moving an
   * entry (delete, then set) is the costliest part of a hit on a hot key: an unbounded store skips it.
   */
  const use = (key: string, entry: Entry): void => {
    if (capacity === Infinity) return
    entries.delete(key)
    entries.set(key, entry)
  }

  const sweep = (now: number): void => {
    for (const [key, entry] of entries) {
      if (entry.expiresAt <= now) entries.delete(key)
    }
  }

  const withTtl = <A>(
    operation: string,
    options: WriteOptions | undefined,
    f: (ttl: number, now: number) => A
  ): Effect.Effect<A> =>
    Effect.clockWith((clock) => {
      const ttl = ttlMillis(options?.ttl)
      if (ttl === undefined) return Edition.dieMessage(invalidTtl(`MemoryStore.${operation}`, options?.ttl))
      return Effect.sync(() => f(ttl, Edition.nowUnsafe(clock)))
    })

  const getEntry = (key: string): Effect.Effect<Option.Option<CacheEntry>> =>
    Effect.clockWith((clock) =>
      Effect.sync(() => {
        const now = Edition.nowUnsafe(clock)
        const entry = live(key, now)
        if (entry === undefined) return Option.none()
        use(key, entry)
        return Option.some({
          value: entry.value,
          ttl: entry.expiresAt === Infinity ? Option.none() : Option.some(Duration.millis(entry.expiresAt - now))
        })
      })
    )

  return {
    get: (key) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const entry = live(key, Edition.nowUnsafe(clock))
          if (entry === undefined) return Option.none()
          use(key, entry)
          return Option.some(entry.value)
        })
      ),
    getEntry,
    set: (key, value, options) =>
      withTtl("set", options, (ttl, now) => {
        entries.delete(key)
        // A zero TTL stores nothing, but still replaces what was there.
        if (ttl <= 0) return false
        if (entries.size >= capacity) {
          const oldest = entries.keys().next()
          if (!oldest.done) entries.delete(oldest.value)
        }
        entries.set(key, { value, expiresAt: now + ttl })
        return true
      }),
    touch: (key, options) =>
      withTtl("touch", options, (ttl, now) => {
        const entry = live(key, now)
        if (entry === undefined) return false
        if (ttl <= 0) {
          entries.delete(key)
        } else {
          entry.expiresAt = now + ttl
          use(key, entry)
        }
        return true
      }),
    delete: (key) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          const existed = live(key, Edition.nowUnsafe(clock)) !== undefined
          entries.delete(key)
          return existed
        })
      ),
    keys: (prefix) =>
      Effect.clockWith((clock) =>
        Effect.sync(() => {
          sweep(Edition.nowUnsafe(clock))
          const all = Array.from(entries.keys())
          return prefix === undefined || prefix === "" ? all : all.filter((key) => key.startsWith(prefix))
        })
      ),
    size: Effect.clockWith((clock) =>
      Effect.sync(() => {
        sweep(Edition.nowUnsafe(clock))
        return entries.size
      })
    ),
    ping: Effect.succeed(true)
  }
}
