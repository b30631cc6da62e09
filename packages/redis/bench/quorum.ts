/**
 * `sharing.quorum` on Redis: what a quorum costs the fleet and how fast it opens, on a
 * redis-server of the script's own (so that its command counts are this fleet's alone).
 *
 *   npx tsx packages/redis/bench/quorum.ts [--json]
 *
 * MEMBERS (default 10), QUORUM (default 3), ROUNDS (default 30). Each member is a breaker with a
 * RedisBreakerStore (two connections) of its own, in this process. Figures:
 * - open: milliseconds from the trip that makes the quorum to every member Open (p50, p99);
 * - idle: Redis commands per second of the idle fleet (heartbeats only; none without a quorum);
 * - trip: Redis commands for one member's trip below the quorum (report and count).
 */
import { BreakerStore, CircuitBreaker, Policy } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import { Effect, Exit, Scope } from "effect"
import { Redis } from "ioredis"
import { spawn } from "node:child_process"
import * as net from "node:net"
import { RedisBreakerStore } from "../src/index.js"

const membersCount = Number(process.env.MEMBERS ?? 10)
const quorum = Number(process.env.QUORUM ?? 3)
const rounds = Number(process.env.ROUNDS ?? 30)
const json = process.argv.includes("--json")

const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const port = (server.address() as net.AddressInfo).port
      server.close(() => resolve(port))
    })
  })

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!
}

const main = async () => {
  const port = await freePort()
  const server = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], {
    stdio: "ignore"
  })
  const admin = new Redis(port, "127.0.0.1", { retryStrategy: (n) => Math.min(n * 50, 500) })
  for (let i = 0; i < 100 && admin.status !== "ready"; i++) await sleep(20)
  /** Calls per command since the server started (INFO's own calls left out). */
  const commandStats = async (): Promise<Record<string, number>> => {
    const info = await admin.info("commandstats")
    const stats: Record<string, number> = {}
    for (const [, name, calls] of info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) stats[name!] = Number(calls)
    delete stats["info"]
    return stats
  }
  const since = (before: Record<string, number>, after: Record<string, number>) =>
    Object.fromEntries(
      Object.entries(after)
        .map(([name, calls]) => [name, calls - (before[name] ?? 0)] as const)
        .filter(([, calls]) => calls > 0)
    )
  const total = (stats: Record<string, number>) => Object.values(stats).reduce((a, b) => a + b, 0)
  const scope = Effect.runSync(Scope.make())
  const run = <A>(effect: Effect.Effect<A, unknown, Scope.Scope>) =>
    Effect.runPromise(Effect.provideService(effect, Scope.Scope, scope))
  try {
    const url = `redis://127.0.0.1:${port}`
    const member = (name: string) =>
      Effect.flatMap(RedisBreakerStore.make({ url, prefix: "bench:" }), (store) =>
        CircuitBreaker.make({
          name,
          policy: Policy.consecutiveFailures(1),
          openFor: "1 minute",
          sharing: { quorum, quorumWindow: "1 minute" }
        }).pipe(Effect.provideService(BreakerStore.BreakerStore, store))
      )
    const fail = (b: CircuitBreaker.CircuitBreaker) => Effect.runPromise(Edition.result(b.execute(Effect.fail("boom"))))

    // open: every round on a circuit name of its own, so that no round sees another's trips
    const openMillis: Array<number> = []
    for (let round = 0; round < rounds; round++) {
      const roundScope = Effect.runSync(Scope.make())
      const fleet = await Effect.runPromise(
        Effect.provideService(
          Effect.all(Array.from({ length: membersCount }, () => member(`open-${round}`))),
          Scope.Scope,
          roundScope
        )
      )
      for (let i = 0; i < quorum - 1; i++) await fail(fleet[i]!)
      await sleep(20) // the reports below the quorum land first
      const start = performance.now()
      await fail(fleet[quorum - 1]!)
      for (;;) {
        const states = await Promise.all(fleet.map((b) => Effect.runPromise(b.state)))
        if (states.every((s) => s._tag === "Open")) break
        await new Promise((resolve) => setImmediate(resolve))
      }
      openMillis.push(performance.now() - start)
      await Effect.runPromise(Scope.close(roundScope, Exit.void))
    }

    // idle and trip: one fleet, quiet, then one trip below the quorum
    const fleet = await run(Effect.all(Array.from({ length: membersCount }, () => member("idle"))))
    await sleep(500)
    const idleFrom = await commandStats()
    const idleSeconds = 10
    await sleep(idleSeconds * 1_000)
    const idleStats = since(idleFrom, await commandStats())
    const tripFrom = await commandStats()
    await fail(fleet[0]!)
    await sleep(200)
    const tripStats = since(tripFrom, await commandStats())
    const result = {
      members: membersCount,
      quorum,
      rounds,
      openP50Millis: Number(percentile(openMillis, 0.5).toFixed(2)),
      openP99Millis: Number(percentile(openMillis, 0.99).toFixed(2)),
      idleCommandsPerSecond: Number((total(idleStats) / idleSeconds).toFixed(2)),
      idleCommands: idleStats,
      tripCommands: tripStats
    }
    console.log(json ? JSON.stringify(result) : result)
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    admin.disconnect()
    server.kill("SIGKILL")
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e)
    process.exit(1)
  }
)
