/**
 * get/set throughput of RedisStore next to raw ioredis, on the same server in the same run.
 *
 *   npx tsx packages/redis/bench/throughput.ts [--json]
 *
 * REDIS_URL (default redis://127.0.0.1:6379), OPS (operations per round, default 20000), ROUNDS
 * (default 5), CONCURRENCY (calls in flight in the concurrent mode, default 64). Each figure is the
 * median over the rounds; raw and store rounds alternate, so that drift on the machine hits both.
 * Keys live under a prefix of this run's own and are deleted at the end.
 *
 * The store's rounds run as a server would, a fiber per call (`Effect.forEach` with concurrency);
 * the concurrent modes also run the store in 64 fibers that loop, as the raw rounds do with 64 async
 * loops, to show what the fiber forked per call costs apart from the store (not the goal's figure).
 */
import * as Edition from "@circuitry/core/Edition"
import { Effect, Exit, Scope } from "effect"
import { Redis } from "ioredis"
import { RedisStore } from "../src/index.js"

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const ops = Number(process.env.OPS ?? 20_000)
const rounds = Number(process.env.ROUNDS ?? 5)
const concurrency = Number(process.env.CONCURRENCY ?? 64)
const json = process.argv.includes("--json")
const prefix = `bench:redis:${process.pid}:`
const value = "v".repeat(100)
const keyCount = 1_000

const median = (xs: ReadonlyArray<number>): number => {
  const s = [...xs].sort((a, b) => a - b)
  const m = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2
}

/** One round: operations per second (wall clock) and this process's CPU microseconds per operation. */
interface Round {
  readonly rate: number
  readonly cpuMicros: number
}

const timed = async (n: number, run: () => Promise<unknown>): Promise<Round> => {
  const cpu = process.cpuUsage()
  const start = performance.now()
  await run()
  const wall = performance.now() - start
  const used = process.cpuUsage(cpu)
  return { rate: n / (wall / 1_000), cpuMicros: (used.user + used.system) / n }
}

/** Runs `n` calls of `op`, `inFlight` at a time. */
const rawRound = (op: (i: number) => Promise<unknown>, n: number, inFlight: number): Promise<Round> => {
  let next = 0
  return timed(n, () =>
    Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < n) await op(next++)
      })
    )
  )
}

const storeRound = (op: (i: number) => Effect.Effect<unknown, unknown>, n: number, inFlight: number) => {
  const indices = Array.from({ length: n }, (_, i) => i)
  return timed(n, () => Effect.runPromise(Effect.forEach(indices, op, { concurrency: inFlight, discard: true })))
}

/** `inFlight` fibers, each calling `op` in a loop until `n` calls are made: no fiber per call. */
const loopingRound = (op: (i: number) => Effect.Effect<unknown, unknown>, n: number, inFlight: number) => {
  let next = 0
  const loop = Effect.whileLoop({ while: () => next < n, body: () => op(next++), step: () => {} })
  const loops = Array.from({ length: inFlight }, () => loop)
  return timed(n, () => Effect.runPromise(Effect.all(loops, { concurrency: "unbounded", discard: true })))
}

const main = async () => {
  const raw = new Redis(url)
  const scope = Effect.runSync(Scope.make())
  // deadline and liveness well above any reply time here: the bench measures the path, not timeouts
  const store = await Effect.runPromise(
    Edition.inScope(RedisStore.make({ url, prefix: prefix + "store:", deadline: "5 seconds" }), scope)
  )
  const rawKey = (i: number) => `${prefix}raw:k${i % keyCount}`
  const storeKey = (i: number) => `k${i % keyCount}`

  const cases = [
    { op: "set", mode: "sequential", inFlight: 1 },
    { op: "get", mode: "sequential", inFlight: 1 },
    { op: "set", mode: `concurrent ${concurrency}`, inFlight: concurrency },
    { op: "get", mode: `concurrent ${concurrency}`, inFlight: concurrency }
  ] as const
  const results: Array<{
    op: string
    mode: string
    rawOpsPerSec: number
    effectOpsPerSec: number
    storeOpsPerSec: number
    ratio: number
    /** Concurrent modes only: the store in `concurrency` looping fibers, over raw. */
    loopingOpsPerSec: number | undefined
    loopingRatio: number | undefined
    rawCpuMicros: number
    effectCpuMicros: number
    storeCpuMicros: number
    cpuRatio: number
  }> = []
  try {
    // warm up: connections, JIT, scripts, and the keys that get reads
    await rawRound((i) => raw.set(rawKey(i), value), keyCount, 16)
    await storeRound((i) => store.set(storeKey(i), value), keyCount, 16)
    for (const c of cases) {
      const rawOp = c.op === "set" ? (i: number) => raw.set(rawKey(i), value) : (i: number) => raw.get(rawKey(i))
      // the same ioredis call in the same Effect harness as the store: what Effect itself costs
      const effectOp =
        c.op === "set"
          ? (i: number) => Effect.promise(() => raw.set(rawKey(i), value))
          : (i: number) => Effect.promise(() => raw.get(rawKey(i)))
      const storeOp =
        c.op === "set" ? (i: number) => store.set(storeKey(i), value) : (i: number) => store.get(storeKey(i))
      const n = c.inFlight === 1 ? Math.max(1, Math.floor(ops / 4)) : ops
      await rawRound(rawOp, Math.min(n, 2_000), c.inFlight)
      await storeRound(storeOp, Math.min(n, 2_000), c.inFlight)
      const rawRounds: Array<Round> = []
      const effectRounds: Array<Round> = []
      const storeRounds: Array<Round> = []
      const loopingRounds: Array<Round> = []
      for (let r = 0; r < rounds; r++) {
        rawRounds.push(await rawRound(rawOp, n, c.inFlight))
        effectRounds.push(await storeRound(effectOp, n, c.inFlight))
        storeRounds.push(await storeRound(storeOp, n, c.inFlight))
        if (c.inFlight > 1) loopingRounds.push(await loopingRound(storeOp, n, c.inFlight))
      }
      const loopingOpsPerSec = loopingRounds.length > 0 ? median(loopingRounds.map((r) => r.rate)) : undefined
      const rawOpsPerSec = median(rawRounds.map((r) => r.rate))
      const storeOpsPerSec = median(storeRounds.map((r) => r.rate))
      const rawCpuMicros = median(rawRounds.map((r) => r.cpuMicros))
      const storeCpuMicros = median(storeRounds.map((r) => r.cpuMicros))
      results.push({
        op: c.op,
        mode: c.mode,
        rawOpsPerSec,
        effectOpsPerSec: median(effectRounds.map((r) => r.rate)),
        storeOpsPerSec,
        ratio: storeOpsPerSec / rawOpsPerSec,
        loopingOpsPerSec,
        loopingRatio: loopingOpsPerSec === undefined ? undefined : loopingOpsPerSec / rawOpsPerSec,
        rawCpuMicros,
        effectCpuMicros: median(effectRounds.map((r) => r.cpuMicros)),
        storeCpuMicros,
        // raw CPU per operation over the store's: the share of raw throughput a CPU-bound client keeps
        cpuRatio: rawCpuMicros / storeCpuMicros
      })
    }
  } finally {
    let cursor = "0"
    do {
      const [next, keys] = await raw.scan(cursor, "MATCH", prefix + "*", "COUNT", 1000)
      if (keys.length > 0) await raw.del(...keys)
      cursor = next
    } while (cursor !== "0")
    await Effect.runPromise(Scope.close(scope, Exit.void))
    raw.disconnect()
  }

  if (json) {
    process.stdout.write(JSON.stringify({ url, ops, rounds, concurrency, valueBytes: value.length, results }) + "\n")
    return
  }
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US")
  console.log(`RedisStore vs raw ioredis on ${url}: ${rounds} rounds, median ops/s, ${value.length}-byte values`)
  console.log("(ioredis in Effect: the same ioredis call through the store's Effect harness, Effect.promise)")
  console.log(
    "op   mode            raw ioredis  ioredis in Effect   RedisStore   store/raw   CPU µs/op raw  in Effect  store  raw/store"
  )
  for (const r of results) {
    console.log(
      `${r.op.padEnd(5)}${r.mode.padEnd(16)}${fmt(r.rawOpsPerSec).padStart(11)}  ${fmt(r.effectOpsPerSec).padStart(
        17
      )}  ${fmt(r.storeOpsPerSec).padStart(11)}   ${(r.ratio * 100).toFixed(0).padStart(8)}%   ${r.rawCpuMicros
        .toFixed(1)
        .padStart(
          12
        )}  ${r.effectCpuMicros.toFixed(1).padStart(9)}  ${r.storeCpuMicros.toFixed(1).padStart(5)}  ${(r.cpuRatio * 100).toFixed(0).padStart(8)}%`
    )
  }
  for (const r of results.filter((r) => r.loopingOpsPerSec !== undefined)) {
    console.log(
      `${r.op} ${r.mode}, RedisStore in ${concurrency} looping fibers (no fiber per call): ${fmt(
        r.loopingOpsPerSec!
      )} ops/s, ${(r.loopingRatio! * 100).toFixed(0)}% of raw`
    )
  }
  // The goal (issue 13): with 64 calls in flight, RedisStore keeps >= 80% of raw ioredis throughput.
  for (const r of results.filter((r) => r.mode.startsWith("concurrent"))) {
    console.log(
      `goal ${r.op} ${r.mode}: store/raw ${(r.ratio * 100).toFixed(0)}% (CPU ${(r.cpuRatio * 100).toFixed(0)}%) >= 80%: ${
        r.ratio >= 0.8 ? "PASS" : "FAIL"
      }`
    )
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
