/**
 * The guard's overhead per `get`, over the bare store, measured in one run.
 *
 *   npx tsx packages/cache/bench/guard.ts            (from the repository root)
 *   npx tsx packages/cache/bench/guard.ts --json     (one JSON object on stdout, for `pnpm bench`)
 *
 * Each case runs `BATCH` gets of a cached key in one Effect, `REPEATS` times after a warm-up; the
 * figure is the median time per get over the rounds (the cases are interleaved, so that drift from
 * other load hits each alike). The bare MemoryStore get is the baseline of the same run.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Effect, Exit, Scope } from "effect"
import { Cache, LayeredStore, MemoryStore } from "../src/index.js"
import type { CacheStore } from "../src/index.js"

const BATCH = 5_000
const REPEATS = 15
const WARMUP = 3
const ROUNDS = 5

const gets = (store: CacheStore.CacheStore<unknown>, key: string) =>
  Effect.gen(function* () {
    for (let i = 0; i < BATCH; i++) yield* store.get(key)
  })

/** Median nanoseconds per get. */
const measure = (store: CacheStore.CacheStore<unknown>, key: string): number => {
  const run = gets(store, key)
  const samples: Array<number> = []
  for (let r = 0; r < WARMUP + REPEATS; r++) {
    const start = process.hrtime.bigint()
    Effect.runSync(run)
    const elapsed = Number(process.hrtime.bigint() - start)
    if (r >= WARMUP) samples.push(elapsed / BATCH)
  }
  samples.sort((a, b) => a - b)
  return samples[Math.floor(samples.length / 2)]!
}

const main = Effect.gen(function* () {
  const scope = yield* Scope.make()
  const inScope = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) => Effect.provideService(effect, Scope.Scope, scope)
  const bare = yield* MemoryStore.make()
  yield* bare.set("k", "v")

  const consecutive = yield* inScope(CircuitBreaker.make({ name: "bench", policy: Policy.consecutiveFailures(5) }))
  const rate = yield* inScope(
    CircuitBreaker.make({
      name: "bench-rate",
      policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 20, window: Policy.timeWindow("10 seconds") })
    })
  )
  const open = yield* inScope(CircuitBreaker.make({ name: "bench-open", openFor: "1 hour" }))
  yield* open.isolate // rejects everything, like an open circuit, for the whole run
  const l1 = yield* MemoryStore.make()
  const layered = yield* inScope(LayeredStore.make(l1, Cache.guard(bare, consecutive)))
  yield* layered.get("k") // fills L1

  const cases: Array<[string, CacheStore.CacheStore<unknown>]> = [
    ["MemoryStore.get (baseline)", bare],
    [
      "breaker.execute(get), no guard (the breaker's share)",
      { ...bare, get: (key) => consecutive.execute(bare.get(key)) }
    ],
    ["Cache.guard get, closed (consecutiveFailures)", Cache.guard(bare, consecutive)],
    ["Cache.guard get, closed (failureRate, time window)", Cache.guard(bare, rate)],
    ["Cache.guard get, shed (circuit not closed)", Cache.guard(bare, open, { onError: () => Effect.void })],
    ["LayeredStore get, L1 hit over a guarded L2", layered]
  ]
  const results = new Map<string, Array<number>>(cases.map(([name]) => [name, []]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, store] of cases) results.get(name)!.push(measure(store, "k"))
  }
  yield* Scope.close(scope, Exit.void)
  const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const figures = cases.map(([name]) => ({
    name,
    nsPerGet: median(results.get(name)!),
    bestRoundNs: Math.min(...results.get(name)!)
  }))
  const baseline = figures[0]!.nsPerGet
  return figures.map((f) => ({ ...f, overheadNs: f.nsPerGet - baseline, ratio: f.nsPerGet / baseline }))
})

const figures = Effect.runSync(main)
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ benchmark: "cache-guard-get", batch: BATCH, repeats: REPEATS, figures }))
} else {
  console.log(
    `Cache.guard overhead per get (median of ${REPEATS} x ${BATCH} gets, ${ROUNDS} interleaved rounds; best round in brackets)`
  )
  console.log(`node ${process.version}`)
  for (const f of figures) {
    console.log(
      `${f.name.padEnd(52)} ${f.nsPerGet.toFixed(0).padStart(6)} ns/get  ` +
        `${f.overheadNs >= 0 ? "+" : ""}${f.overheadNs.toFixed(0).padStart(5)} ns  x${f.ratio.toFixed(2)}  ` +
        `[${f.bestRoundNs.toFixed(0)} ns]`
    )
  }
}
