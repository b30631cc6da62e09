/**
 * Redis down, as a user meets it: a port where nothing listens. Every message says what happened
 * in our words, with the address: the calls, the startup warning, and the breaker's warning.
 */
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import { RedisBreakerStore, RedisStore } from "@circuitry/redis"
import { assert, describe, isEmptyCause, it, logTo, Result, result } from "@circuitry/testkit"
import { Cause, Context, Effect, Layer } from "effect"
import * as net from "node:net"
import { failureOf } from "./utils/outcome.js"

/** A port nothing listens on: a fresh ephemeral port, closed at once. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve, reject) => {
      const server = net.createServer()
      server.once("error", reject)
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        server.close(() => resolve(port))
      })
    })
)

interface Logged {
  readonly level: string
  readonly message: unknown
  readonly cause: string
}

/** Every log line of `effect`: its messages as logged (one string, or several) and its cause, pretty. */
const logsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const logs: Array<Logged> = []
    const logger = logTo(({ cause, level, messages }) => {
      logs.push({ level, message: messages, cause: isEmptyCause(cause) ? "" : Cause.pretty(cause) })
    })
    const a = yield* effect.pipe(Effect.provide(logger))
    return [a, logs] as const
  })

/** A message as one string: an array of one is one message, an array of more is the "message= twice". */
const single = (message: unknown): string | undefined =>
  typeof message === "string"
    ? message
    : Array.isArray(message) && message.length === 1 && typeof message[0] === "string"
      ? message[0]
      : undefined

describe("Redis down: what happened, in our words, with the address", () => {
  it.scoped("a call fails saying it was not sent: not connected to the address, connection refused", () =>
    Effect.gen(function* () {
      const url = `redis://127.0.0.1:${yield* closedPort}`
      const store = Context.get(yield* Layer.build(RedisBreakerStore.layer({ url })), BreakerStore.BreakerStore)
      const circuit = yield* store.connect("payments")
      const outcome = yield* result(circuit.verdict.load)
      assert.isTrue(Result.isFailure(outcome))
      const error = failureOf(outcome)
      if (error !== undefined) {
        assert.strictEqual(error.message, `not connected to ${url}: connection refused (the command was not sent)`)
      }
      const cache = yield* RedisStore.make({ url })
      const got = yield* result(cache.get("k"))
      assert.isTrue(Result.isFailure(got))
      const refused = failureOf(got)
      if (refused !== undefined) {
        assert.include(refused.message, `not connected to ${url}: connection refused (the command was not sent)`)
      }
    })
  )

  it.scoped("the startup warning says the connection was refused, and where", () =>
    Effect.gen(function* () {
      const url = `redis://127.0.0.1:${yield* closedPort}`
      const [, logs] = yield* logsOf(RedisStore.make({ url }))
      const warnings = logs.filter((l) => l.level === "Warn").map((l) => single(l.message))
      assert.deepStrictEqual(warnings, [
        `RedisStore: cannot connect to ${url} (connection refused); the store starts without it and connects when it is back`
      ])
    })
  )

  it.scoped("the breaker's warning is one message, with the store's error, address and reason, as its cause", () =>
    Effect.gen(function* () {
      const url = `redis://127.0.0.1:${yield* closedPort}`
      const store = yield* Layer.build(RedisBreakerStore.layer({ url }))
      const [, logs] = yield* logsOf(
        CircuitBreaker.make({ name: "payments", policy: Policy.consecutiveFailures(1) }).pipe(Effect.provide(store))
      )
      const warning = logs.find((l) => l.level === "Warn")
      assert.isDefined(warning)
      assert.strictEqual(
        single(warning!.message),
        `circuit "payments": shared store (redis) unreachable, deciding locally until it answers`
      )
      assert.include(warning!.cause, `BreakerStoreError: not connected to ${url}: connection refused`)
    })
  )
})
