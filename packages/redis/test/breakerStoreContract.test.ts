import * as Edition from "@circuitry/core/Edition"
import type { ServiceOf } from "@circuitry/testkit"
import { RedisBreakerStore } from "@circuitry/redis"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { Corruptions, storeSuite } from "@circuitry/testkit/conformance/breakerStore"
import { cleanup, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"

// The breaker-store conformance suite, against Redis: a prefix of its own, emptied afterwards.
const prefix = uniquePrefix("breaker-contract")
const admin = Edition.layerScoped(
  Corruptions,
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => new Redis(URL)),
      (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
    ),
    (client) => {
      const key = (name: string) => `${prefix}{${name}}:circuit`
      const hset = (name: string, fields: Record<string, string>) =>
        Effect.promise(() => client.del(key(name)).then(() => client.hset(key(name), fields)))
      return [
        [
          "times as text",
          (name) => hset(name, { state: "Open", until: "tomorrow", at: "9999999999999x", origin: "a" })
        ],
        ["no time at all", (name) => hset(name, { state: "Open", until: "5000", origin: "a" })],
        [
          "a foreign state with a far-future time",
          (name) => hset(name, { state: "OPEN!", until: "1", at: "9e15", origin: "x" })
        ],
        ["an old schema's fields", (name) => hset(name, { status: "open", openedAt: "123", version: "1" })],
        [
          "a string where the hash belongs",
          (name) => Effect.promise(() => client.set(key(name), "open")).pipe(Effect.asVoid)
        ]
      ] satisfies ServiceOf<typeof Corruptions>
    }
  )
)

storeSuite([["Redis", Layer.provideMerge(RedisBreakerStore.layer({ url: URL, prefix }), admin), { corruptible: true }]])
