/**
 * A shared breaker's hot paths with the Redis store, next to the same breaker in memory, in the same
 * run: a failing call (the failure is reported to the store), and an open + close cycle (a failure
 * that trips the breaker, then a reset: two verdicts saved). The event loop turns between calls, as in a server, so the store's background
 * writer runs between them and its work is counted in this process's CPU time.
 *
 *   npx tsx packages/redis/bench/breaker.ts [--json]
 *
 * REDIS_URL (default redis://127.0.0.1:6379), CALLS (per round, default 2000), ROUNDS (default 7).
 * Each figure is the median over the rounds of this process's CPU microseconds per call; memory and
 * Redis rounds alternate, so that drift on the machine hits both. The cycle also has a baseline: the
 * same Redis traffic sent with raw ioredis (three commands, two publications heard back). The goal (issue 13): with the Redis
 * store, each path costs at most 2x the in-memory breaker's.
 */
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { Effect, Exit, Scope } from "effect"
import { Redis } from "ioredis"
import { RedisBreakerStore } from "../src/index.js"

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const calls = Number(process.env.CALLS ?? 2_000)
const rounds = Number(process.env.ROUNDS ?? 7)
const json = process.argv.includes("--json")
const prefix = `bench:breaker:${process.pid}:`

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** This process's CPU microseconds per call over `n` calls, the event loop turning after each. */
const cpuPerCall = async (n: number, call: () => Promise<unknown>): Promise<number> => {
  const cpu = process.cpuUsage()
  for (let i = 0; i < n; i++) {
    await call()
    await turn()
  }
  // Let the writer send what the last calls left owed, inside the measured time.
  for (let i = 0; i < 20; i++) await turn()
  const used = process.cpuUsage(cpu)
  return (used.user + used.system) / n
}

// A policy that never opens on its own: every failing call stays a closed call that reports a failure.
const neverTrips = { policy: Policy.consecutiveFailures(Number.MAX_SAFE_INTEGER), openFor: "1 minute" } as const

interface Paths {
  readonly failingCall: () => Promise<unknown>
  readonly openClose: () => Promise<unknown>
}

// One failure opens this one: the cycle is a failing call that trips it, then a reset.
const tripsAtOnce = { policy: Policy.consecutiveFailures(1), openFor: "1 minute" } as const

const paths = (breaker: CircuitBreaker.CircuitBreaker, tripping: CircuitBreaker.CircuitBreaker): Paths => {
  const failing = Edition.result(CircuitBreaker.withBreaker(Effect.fail("boom"), breaker))
  const cycle = Effect.andThen(
    Edition.result(CircuitBreaker.withBreaker(Effect.fail("boom"), tripping)),
    tripping.reset
  )
  return {
    failingCall: () => Effect.runPromise(failing),
    openClose: () => Effect.runPromise(cycle)
  }
}

const main = async () => {
  const scope = Effect.runSync(Scope.make())
  const raw = new Redis(url)
  try {
    const make = (name: string, options: CircuitBreaker.Options) =>
      Effect.runPromise(Edition.inScope(CircuitBreaker.make({ name, ...options }), scope))
    const memory = paths(await make("memory", neverTrips), await make("memory-cycle", tripsAtOnce))
    const store = await Effect.runPromise(
      Edition.inScope(RedisBreakerStore.make({ url, prefix, deadline: "5 seconds" }), scope)
    )
    const makeShared = (name: string, options: CircuitBreaker.Options) =>
      Effect.runPromise(
        CircuitBreaker.make({ name, ...options }).pipe(
          Effect.provideService(BreakerStore.BreakerStore, store),
          Edition.inScope(scope)
        )
      )
    const shared = paths(await makeShared("shared", neverTrips), await makeShared("shared-cycle", tripsAtOnce))
    // What the cycle's I/O costs by itself: the same traffic with raw ioredis, sent as the breaker
    // sends it (without waiting for replies): the trip's verdict and the reset's, each a command
    // whose publication this process hears back on a subscriber, and the trip's failure time.
    const subscriber = new Redis(url)
    const channel = `${prefix}raw-verdicts`
    await subscriber.subscribe(channel)
    subscriber.on("message", (_channel: string, message: string) => JSON.parse(message))
    const verdict = JSON.stringify({ name: "raw", state: "Open", remainingMillis: 60_000, ageMillis: 0, origin: "raw" })
    const rawCycle = () => {
      void raw.publish(channel, verdict)
      void raw.hincrby(`${prefix}raw`, "failures", 0)
      void raw.publish(channel, verdict)
      return Promise.resolve()
    }
    const cases = [
      { id: "failing-call", label: "a failing call (closed, the failure reported)", pick: (p: Paths) => p.failingCall },
      {
        id: "open-close",
        label: "an open + close cycle (a failure trips it, then reset)",
        pick: (p: Paths) => p.openClose,
        raw: rawCycle
      }
    ] as const
    const results: Array<{
      id: string
      label: string
      memoryMicros: number
      redisMicros: number
      ratio: number
      rawMicros?: number
    }> = []
    for (const c of cases) {
      const baseline = "raw" in c ? c.raw : undefined
      await cpuPerCall(Math.min(calls, 500), c.pick(memory))
      await cpuPerCall(Math.min(calls, 500), c.pick(shared))
      if (baseline !== undefined) await cpuPerCall(Math.min(calls, 500), baseline)
      const inMemory: Array<number> = []
      const withRedis: Array<number> = []
      const withRaw: Array<number> = []
      for (let r = 0; r < rounds; r++) {
        inMemory.push(await cpuPerCall(calls, c.pick(memory)))
        withRedis.push(await cpuPerCall(calls, c.pick(shared)))
        if (baseline !== undefined) withRaw.push(await cpuPerCall(calls, baseline))
      }
      const memoryMicros = median(inMemory)
      const redisMicros = median(withRedis)
      results.push({
        id: c.id,
        label: c.label,
        memoryMicros,
        redisMicros,
        ratio: redisMicros / memoryMicros,
        ...(withRaw.length > 0 ? { rawMicros: median(withRaw) } : {})
      })
    }
    subscriber.disconnect()
    if (json) {
      process.stdout.write(JSON.stringify({ url, calls, rounds, results }) + "\n")
      return
    }
    console.log(`A shared breaker on ${url} against the same breaker in memory: CPU µs per call, median of ${rounds}`)
    for (const r of results) {
      console.log(
        `${r.label.padEnd(50)} memory ${r.memoryMicros.toFixed(1).padStart(6)}  redis ${r.redisMicros
          .toFixed(1)
          .padStart(6)}  ${r.ratio.toFixed(2)}x  <= 2x: ${r.ratio <= 2 ? "PASS" : "FAIL"}${
          r.rawMicros === undefined ? "" : `  (raw ioredis, the same traffic: ${r.rawMicros.toFixed(1)})`
        }`
      )
    }
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    let cursor = "0"
    do {
      const [next, keys] = await raw.scan(cursor, "MATCH", prefix + "*", "COUNT", 1000)
      if (keys.length > 0) await raw.del(...keys)
      cursor = next
    } while (cursor !== "0")
    raw.disconnect()
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
