// What both entry points run (app.mjs loads the packages with `import`, app.cjs with `require`):
// each public package used the way its README shows, against real servers. Prints nothing; the
// entry point prints the result as JSON for the test to compare.
"use strict"

module.exports = async function scenario(m, config) {
  const { Effect, Layer, Option } = m.effect
  const { BreakerRegistry, CircuitBreaker, Policy } = m.breaker
  const { Cache, MemoryStore } = m.cache
  const { RedisStore } = m.redis
  const { SqlBreakerStore } = m.sql
  const { BreakerHttpClient } = m.platform
  const { NodeHttpClient } = m.platformNode

  // A breaker trips after two failures; the third call is rejected without running.
  const breaker = Effect.gen(function* () {
    const payments = yield* CircuitBreaker.make({
      name: "payments",
      policy: Policy.consecutiveFailures(2),
      openFor: "1 minute"
    })
    let ran = 0
    const call = Effect.suspend(() => {
      ran++
      return Effect.fail("declined")
    }).pipe(CircuitBreaker.withBreaker(payments))
    yield* Effect.either(call)
    yield* Effect.either(call)
    const error = yield* Effect.flip(call)
    return {
      ran,
      state: (yield* payments.state)._tag,
      error: error._tag,
      isBreakerOpenError: error instanceof CircuitBreaker.BreakerOpenError,
      breaker: error.breaker,
      retryAfterPositive: error.retryAfterMillis > 0
    }
  })

  // Cache.guard over a MemoryStore: a hit, then reads shed while the breaker is isolated.
  const cache = Effect.gen(function* () {
    const guardBreaker = yield* CircuitBreaker.make({ name: "cache" })
    const store = Cache.guard(yield* MemoryStore.make(), guardBreaker)
    const stored = yield* store.set("user:1", "ada")
    const hit = yield* store.get("user:1")
    yield* guardBreaker.isolate
    const shed = yield* store.get("user:1")
    return { stored, hit: Option.getOrNull(hit), shedWhileIsolated: Option.isNone(shed) }
  })

  // RedisStore against the Redis the test names, under a prefix of its own.
  const redis = Effect.gen(function* () {
    const store = yield* RedisStore.make({ url: config.redisUrl, prefix: config.prefix })
    const stored = yield* store.set("greeting", "from redis", { ttl: "1 minute" })
    const read = yield* store.get("greeting")
    const deleted = yield* store.delete("greeting")
    return { stored, read: Option.getOrNull(read), deleted }
  })

  // SqlBreakerStore on a SQLite file: a breaker made later, over a new connection to the same
  // file, adopts the verdict the first one stored (saved in the background, so poll for it).
  const onSqlite = (effect) =>
    effect.pipe(Effect.scoped, Effect.provide(SqlBreakerStore.layerSqlite({ filename: config.sqliteFile })))
  const email = { name: "email", policy: Policy.consecutiveFailures(1), openFor: "1 hour" }
  const sql = onSqlite(
    Effect.gen(function* () {
      const first = yield* CircuitBreaker.make(email)
      yield* Effect.either(CircuitBreaker.withBreaker(Effect.fail("smtp down"), first))
      const later = yield* onSqlite(Effect.flatMap(CircuitBreaker.make(email), (b) => b.state)).pipe(
        Effect.delay("20 millis"),
        Effect.repeat({ until: (state) => state._tag === "Open" }),
        Effect.timeout("10 seconds")
      )
      return { first: (yield* first.state)._tag, later: later._tag }
    })
  )

  // The platform client against the test's HTTP server, which answers 500: two calls reach it,
  // then the circuit for that origin is open.
  const http = Effect.gen(function* () {
    const client = yield* BreakerHttpClient.make()
    const statuses = []
    for (let i = 0; i < 2; i++) statuses.push((yield* client.get(config.httpUrl)).status)
    const error = yield* Effect.flip(client.get(config.httpUrl))
    return { statuses, error: error._tag }
  }).pipe(
    Effect.provide(
      Layer.merge(
        NodeHttpClient.layer,
        BreakerRegistry.layer({ defaults: { policy: Policy.consecutiveFailures(2), openFor: "1 minute" } })
      )
    )
  )

  const run = (effect) => Effect.runPromise(Effect.scoped(effect))
  return {
    breaker: await run(breaker),
    cache: await run(cache),
    redis: await run(redis),
    sql: await run(sql),
    http: await run(http)
  }
}
