/**
 * A registry's live config kept under one Redis key (BreakerRegistry.watchConfig over a RedisStore's
 * `get`): one change reaches every member. Real Redis, real time, bounded waits.
 */
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisStore } from "@circuitry/redis"
import { assert, describe, it, logTo, result } from "@circuitry/testkit"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { cleanup, eventually, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"
const MEMBERS = 3

const json = (threshold: number) =>
  JSON.stringify({ defaults: { policy: { _tag: "ConsecutiveFailures", threshold }, openFor: "1 minute" } })

describe("BreakerRegistry.watchConfig over a Redis key", () => {
  it.live(
    "a change of the key reaches every member; a bad document is reported and skipped; a deleted key restores the layer's options",
    () => {
      const warnings: Array<string> = []
      const logger = logTo(({ cause, level, messages }) => {
        if (level === "Warn") warnings.push(`${messages.map(String).join(" ")} ${String(cause)}`)
      })
      return Effect.gen(function* () {
        const prefix = uniquePrefix("registry-config")
        const admin = yield* Effect.acquireRelease(
          Effect.sync(() => new Redis(URL)),
          (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
        )
        const writer = yield* RedisStore.make({ url: URL, prefix })
        // Each member has its own connection and its own registry, as separate instances would.
        const fleet = yield* Effect.forEach(Array.from({ length: MEMBERS }), () =>
          Effect.gen(function* () {
            const store = yield* RedisStore.make({ url: URL, prefix })
            return yield* BreakerRegistry.make({
              defaults: { policy: Policy.consecutiveFailures(5) },
              config: BreakerRegistry.watchConfig(store.get("breakers/config"), { every: "50 millis" })
            })
          })
        )
        /** Whether a fresh breaker of `registry` opens on its first failure (what consecutiveFailures(1) does). */
        let n = 0
        const opensOnFirstFailure = (registry: BreakerRegistry.BreakerRegistry) =>
          Effect.gen(function* () {
            const breaker = yield* registry.get(`probe-${n++}`)
            yield* result(CircuitBreaker.withBreaker(Effect.fail("down"), breaker))
            return (yield* breaker.state)._tag === "Open"
          })
        const everyMember = (expected: boolean) =>
          Effect.map(Effect.forEach(fleet, opensOnFirstFailure), (answers) =>
            answers.every((answer) => answer === expected)
          )

        assert.isTrue(yield* everyMember(false))
        assert.isTrue(yield* writer.set("breakers/config", json(1)))
        assert.isTrue(yield* eventually(everyMember(true), 10_000, 20), "every member applied the new threshold")

        // Not JSON: every member reports it once and keeps the config it has.
        assert.isTrue(yield* writer.set("breakers/config", "{ not json"))
        const reported = () => warnings.filter((line) => line.includes("must be a JSON document")).length
        assert.isTrue(
          yield* eventually(
            Effect.sync(() => reported() >= MEMBERS),
            10_000,
            20
          )
        )
        assert.isTrue(yield* everyMember(true))
        assert.strictEqual(reported(), MEMBERS)

        // The key is gone: the layer's options again, everywhere.
        yield* Effect.promise(() => admin.del(prefix + "breakers/config"))
        assert.isTrue(
          yield* eventually(everyMember(false), 10_000, 20),
          "every member went back to the layer's options"
        )
      }).pipe(Effect.scoped, Effect.provide(logger))
    },
    30_000
  )
})
