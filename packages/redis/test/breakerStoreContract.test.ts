import { RedisBreakerStore } from "@circuitry/redis"
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { storeSuite } from "../../breaker/test/storeSuite.js"
import { cleanup, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"

// The breaker-store conformance suite, against Redis: a prefix of its own, emptied afterwards.
const prefix = uniquePrefix("breaker-contract")
const scratch = Layer.scopedDiscard(
  Effect.acquireRelease(
    Effect.sync(() => new Redis(URL)),
    (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
  )
)

storeSuite([["Redis", Layer.provideMerge(RedisBreakerStore.layer({ url: URL, prefix }), scratch)]])
