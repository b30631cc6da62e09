/**
 * The limiter's targets (from the limiter issue), in three groups run like the breaker's:
 *
 * - `limiter`: an admitted call through `withLimiter`, with a fixed limit and with the default
 *   Gradient2, against the floor guard timing each call with the Effect Clock (two reads, as a round
 *   trip needs): every admitted call is timed (sampling the timing is not allowed), so the target
 *   (issue 22) is at most 1.10x that row. The plain floor guard (the same row as in `in-fiber`) is
 *   beside them, for scale;
 * - `limiter-rejection`: a call over the limit against the floor guard's rejection (a prebuilt
 *   error), with the limit held by a call that never ends; the work must never run;
 * - `limiter-memory`: heap per limiter for 100,000 limiters by name in a `LimiterRegistry`.
 *
 * `verdicts` turns them into PASS/FAIL rows for docs/benchmarks.md.
 */
import * as Fiber from "#fiber"
import * as Edition from "@circuitry/core/Edition"
import { Limit, Limiter, LimiterRegistry } from "@circuitry/limiter"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as cases from "../cases.js"
import { gc } from "../gc.js"
import { measure } from "../harness.js"
import type { GroupResult, MemoryGroup, TimedGroup } from "../protocol.js"
import { scaled } from "../protocol.js"
import { median, pairedRatio } from "../stats.js"
import type { Guard, Work } from "../subjects.js"
import * as S from "../subjects.js"
import type { Verdict } from "../targets.js"

export const LIMITS = {
  /** admitted call / the floor guard reading the Clock at start and end, in-fiber */
  admittedRatio: 1.1,
  /** rejection / floor guard's rejection, in-fiber */
  rejectionRatio: 1.2,
  /** bytes per limiter in a registry of 100,000 */
  bytesPerLimiter: 1000
} as const

/** A limiter that holds no resources, so a scope that is never closed is fine. */
const makeLimiter = (limit: Limit.Limit): Limiter.Limiter =>
  Effect.runSync(Limiter.make({ name: "bench", limit }).pipe(Effect.provideServiceEffect(Scope.Scope, Scope.make())))

const through =
  (limiter: Limiter.Limiter): Guard =>
  (self) =>
    Limiter.withLimiter(self, limiter)

/**
 * The floor guard plus what timing a call takes: the Effect Clock read when the call starts and
 * when it ends (the round trip every admitted call through a limiter records). The Clock is looked
 * up by the limiter's own code (../fiber.effect{3,4}.ts re-export it), so the row adds
 * only the reads.
 */
const timedFloor = (): Guard => {
  let failures = 0
  let rtts = 0
  return (self) =>
    Fiber.withFiber((fiber) => {
      const c = Fiber.clockOf(fiber)
      const start = Edition.nowUnsafe(c)
      return Edition.catchCause(
        Effect.map(self, (a) => {
          failures = 0
          rtts += Edition.nowUnsafe(c) - start
          return a
        }),
        (cause) => {
          failures++
          rtts += Edition.nowUnsafe(c) - start
          return Effect.failCause(cause)
        }
      )
    })
}

export const admitted = async (): Promise<TimedGroup> => {
  const work: Work = Effect.succeed(1)
  const make = cases.inFiber
  const rows = await measure(
    [
      make("floor", "floor guard (suspend + catchAllCause(map))", S.makeFloor().guard, work),
      make("floor-timed", "floor guard reading the Effect Clock at start and end (a round trip)", timedFloor(), work),
      make(
        "limiter-fixed",
        "circuitry withLimiter, Limit.fixed(1000000)",
        through(makeLimiter(Limit.fixed(1_000_000))),
        work
      ),
      make(
        "limiter-gradient2",
        "circuitry withLimiter, Limit.gradient2() (the default; a step per call)",
        through(makeLimiter(Limit.gradient2({ max: 1_000_000 }))),
        work
      ),
      make(
        "circuitry-consecutive",
        "circuitry withBreaker, consecutiveFailures(5) (for scale)",
        S.makeCircuitry("consecutive").guard,
        work
      )
    ],
    { calls: scaled(20_000), warmup: scaled(10_000), repeats: Number(process.env["BENCH_REPEATS"] ?? 15) }
  )
  return {
    _tag: "Timed",
    group: "limiter",
    floor: "floor",
    rows,
    notes: [
      "Many calls inside one Effect.gen loop; every call is admitted (nothing else holds the limit).",
      "The floor guard reading the Clock twice per call is what timing a round trip costs by itself: a limiter records every admitted call's round trip (the histogram, the estimate behind retryAfterMillis, the adaptive limits' samples). The limiter can still come in under that row: its one matchCauseEffect frame costs less than the floor's catchAllCause(map)."
    ]
  }
}

export const rejected = async (): Promise<TimedGroup> => {
  let ran = 0
  const work: Work = Effect.sync(() => ++ran)
  const floor = S.makeFloor()
  for (let i = 0; i < 100 && !floor.isOpen(); i++) Effect.runSync(Edition.result(floor.guard(Effect.fail("boom"))))
  const full = (limit: Limit.Limit) => {
    const limiter = makeLimiter(limit)
    Effect.runFork(Limiter.withLimiter(Effect.never, limiter)) // holds the only slot for good
    return limiter
  }
  const fixed = full(Limit.fixed(1))
  const gradient2 = full(Limit.gradient2({ initial: 1, min: 1, max: 1 }))
  if (Effect.runSync(fixed.inFlight) !== 1 || Effect.runSync(gradient2.inFlight) !== 1) {
    throw new Error("the limiters are not full")
  }
  const make = cases.inFiberFailing
  const rows = await measure(
    [
      make("floor", "floor guard, open (a prebuilt error)", floor.guard, work),
      make("limiter-fixed", "circuitry withLimiter, Limit.fixed(1), full", through(fixed), work),
      make("limiter-gradient2", "circuitry withLimiter, Limit.gradient2(), full", through(gradient2), work)
    ],
    { calls: scaled(15_000), warmup: scaled(10_000), repeats: Number(process.env["BENCH_REPEATS"] ?? 13) }
  )
  if (ran !== 0) throw new Error(`a full limiter ran the work ${ran} times`)
  return {
    _tag: "Timed",
    group: "limiter-rejection",
    floor: "floor",
    rows,
    notes: ["Each `Effect.either(guard(work))` in one Effect.gen loop; the work counts its runs and ran 0 times."]
  }
}

export const LIMITERS = 100_000

export const memory = async (repeats: number): Promise<MemoryGroup> => {
  const count = scaled(LIMITERS)
  const names = Array.from({ length: count }, (_, i) => `dependency-${i.toString().padStart(6, "0")}`)
  const heapUsed = () => {
    for (let i = 0; i < 4; i++) gc()
    return process.memoryUsage().heapUsed
  }
  const bytes: Array<number> = []
  const millis: Array<number> = []
  for (let r = 0; r < repeats; r++) {
    const scope = Effect.runSync(Scope.make())
    const before = heapUsed()
    const start = performance.now()
    let registry: LimiterRegistry.LimiterRegistry | undefined = Effect.runSync(
      LimiterRegistry.make({ defaults: { limit: Limit.gradient2() } }).pipe(Effect.provideService(Scope.Scope, scope))
    )
    Effect.runSync(Effect.forEach(names, (name) => registry!.get(name), { discard: true }))
    millis.push(performance.now() - start)
    const after = heapUsed()
    const held = Effect.runSync(registry.names).length
    if (held !== count) throw new Error(`the registry holds ${held} limiters, expected ${count}`)
    bytes.push((after - before) / count)
    await Effect.runPromise(Scope.close(scope, Exit.void))
    registry = undefined
  }
  return {
    _tag: "Memory",
    group: "memory:limiter-gradient2",
    rows: [
      {
        id: "limiter-gradient2",
        label: "circuitry LimiterRegistry.get, Limit.gradient2() (bytes per limiter)",
        bytesPerBreaker: median(bytes),
        samples: bytes,
        breakers: count,
        createMillis: median(millis)
      }
    ],
    notes: [`${count.toLocaleString("en")} limiters with distinct names, in a fresh process.`]
  }
}

const timed = (results: ReadonlyArray<GroupResult>, group: string): TimedGroup | undefined =>
  results.find((r): r is TimedGroup => r._tag === "Timed" && r.group === group)

/** Paired by repeat (see `pairedRatio`), to the row `to` (the group's floor by default). */
const ratio = (group: TimedGroup | undefined, id: string, to = group?.floor): number | undefined => {
  const a = group?.rows.find((r) => r.id === id)
  const b = group?.rows.find((r) => r.id === to)
  return a === undefined || b === undefined ? undefined : pairedRatio(a.samples, b.samples)
}

const verdict = (target: string, value: number | undefined, limit: number, show: (n: number) => string): Verdict => ({
  target,
  measured: value === undefined ? "not measured" : show(value),
  pass: value === undefined ? undefined : value <= limit
})

const times = (n: number) => `${n.toFixed(2)}x`

export const verdicts = (results: ReadonlyArray<GroupResult>): ReadonlyArray<Verdict> => {
  const admittedGroup = timed(results, "limiter")
  const rejectionGroup = timed(results, "limiter-rejection")
  const bytes = results
    .filter((r): r is MemoryGroup => r._tag === "Memory")
    .flatMap((r) => r.rows)
    .find((r) => r.id === "limiter-gradient2")?.bytesPerBreaker
  const out: Array<Verdict> = []
  for (const [id, name] of [
    ["limiter-fixed", "Limit.fixed"],
    ["limiter-gradient2", "Limit.gradient2"]
  ] as const) {
    out.push(
      verdict(
        `limiter, admitted call, ${name}: <= ${LIMITS.admittedRatio.toFixed(2)}x the floor guard reading the Clock at start and end (in-fiber)`,
        ratio(admittedGroup, id, "floor-timed"),
        LIMITS.admittedRatio,
        times
      ),
      verdict(
        `limiter, rejection, ${name}: <= ${LIMITS.rejectionRatio}x the floor guard's rejection (in-fiber)`,
        ratio(rejectionGroup, id),
        LIMITS.rejectionRatio,
        times
      )
    )
  }
  out.push(
    verdict(
      `limiter, memory per limiter, Limit.gradient2, 100,000 in a registry: <= 1 KB (1000 B)`,
      bytes,
      LIMITS.bytesPerLimiter,
      (n) => `${Math.round(n)} B`
    )
  )
  return out
}
