import { RedisStore } from "@circuitry/redis"
import { Effect } from "effect"
import { Redis } from "ioredis"
import { storeSuite } from "../../cache/test/storeSuite.js"
import { cleanup, uniquePrefix } from "./utils/server.js"

const URL = "redis://127.0.0.1:6379"

// The whole cache acceptance suite, against Redis: a fresh prefix per test, emptied afterwards.
storeSuite(
  "RedisStore",
  Effect.gen(function* () {
    const prefix = uniquePrefix("contract")
    yield* Effect.acquireRelease(
      Effect.sync(() => new Redis(URL)),
      (client) => Effect.promise(() => cleanup(client, prefix).finally(() => client.disconnect()))
    )
    return yield* RedisStore.make({ url: URL, prefix })
  }),
  { clock: "live", liveTtlMillis: 50 }
)
