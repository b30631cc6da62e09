/**
 * Memory per breaker: heap used (after full collections) before and after making 100,000
 * breakers with distinct names, held the way an application holds them: circuitry through
 * `BreakerRegistry.get(name)`, the peers in a `Map` by name. The names exist before the first
 * reading, so they are not counted; the map entry that holds each breaker is.
 */
import { BreakerRegistry } from "@circuitry/breaker"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import { gc } from "../gc.js"
import { median } from "../stats.js"
import type { MemoryGroup, MemoryRow } from "../protocol.js"
import { scaled } from "../protocol.js"
import * as S from "../subjects.js"

export const BREAKERS = 100_000
/** The bound of the churn row: 100,000 names go through a registry that holds 1000. */
export const CHURN_BOUND = 1000

interface Held {
  readonly count: () => number
  readonly release: () => Promise<void>
}

interface Subject {
  readonly label: string
  readonly create: (names: ReadonlyArray<string>) => Promise<Held>
}

/** `used`: each breaker runs one successful call (its metric series exist); `maxBreakers`: the registry's bound. */
const circuitry =
  (kind: S.CircuitryPolicy, used = false, maxBreakers?: number): Subject["create"] =>
  async (names) => {
    const scope = Effect.runSync(Scope.make())
    let registry: BreakerRegistry.BreakerRegistry | undefined = await Effect.runPromise(
      BreakerRegistry.make({ defaults: { policy: S.policyOf(kind), openFor: S.OPEN_MILLIS }, maxBreakers }).pipe(
        Effect.provideService(Scope.Scope, scope)
      )
    )
    const work = Effect.succeed(1)
    await Effect.runPromise(
      Effect.forEach(
        names,
        (name): Effect.Effect<unknown, unknown> =>
          used ? Effect.flatMap(registry!.get(name), (b) => b.execute(work)) : registry!.get(name),
        { discard: true }
      )
    )
    return {
      count: () => Effect.runSync(registry!.names).length,
      release: async () => {
        await Effect.runPromise(Scope.close(scope, Exit.void))
        registry = undefined // a suspended async frame may still hold `held`: let it hold nothing
      }
    }
  }

const cockatiel =
  (kind: S.CockatielKind): Subject["create"] =>
  async (names) => {
    const map = new Map(names.map((name) => [name, S.makeCockatiel(kind)] as const))
    return { count: () => map.size, release: async () => map.clear() }
  }

const opossum: Subject["create"] = async (names) => {
  const action = () => Promise.resolve(1)
  const map = new Map(names.map((name) => [name, S.makeOpossum(action)] as const))
  return {
    count: () => map.size,
    release: async () => {
      for (const breaker of map.values()) breaker.shutdown() // clears its interval timers
      map.clear()
    }
  }
}

export const subjects: Record<string, Subject> = {
  "circuitry-consecutive": {
    label: "circuitry BreakerRegistry.get, consecutiveFailures(5)",
    create: circuitry("consecutive")
  },
  "circuitry-rate": {
    label: "circuitry BreakerRegistry.get, failureRate(countWindow(100))",
    create: circuitry("rate")
  },
  "circuitry-consecutive-used": {
    label: "circuitry BreakerRegistry.get, consecutiveFailures(5), after one call each",
    create: circuitry("consecutive", true)
  },
  "circuitry-rate-used": {
    label: "circuitry BreakerRegistry.get, failureRate(countWindow(100)), after one call each",
    create: circuitry("rate", true)
  },
  "circuitry-churn": {
    label: `circuitry registry with maxBreakers ${CHURN_BOUND}, fed ${BREAKERS.toLocaleString("en")} names (one call each): bytes per name fed`,
    create: circuitry("consecutive", true, CHURN_BOUND)
  },
  "cockatiel-consecutive": {
    label: "cockatiel circuitBreaker, ConsecutiveBreaker(5), in a Map",
    create: cockatiel("consecutive")
  },
  "cockatiel-sampling": { label: "cockatiel circuitBreaker, SamplingBreaker, in a Map", create: cockatiel("sampling") },
  opossum: { label: "opossum new CircuitBreaker(fn, opts), in a Map", create: opossum }
}

const heapUsed = (): number => {
  for (let i = 0; i < 4; i++) gc()
  return process.memoryUsage().heapUsed
}

export const measureSubject = async (id: string, breakers: number, repeats: number): Promise<MemoryRow> => {
  const subject = subjects[id]
  if (subject === undefined) throw new Error(`no memory subject "${id}"`)
  const names = Array.from({ length: breakers }, (_, i) => `dependency-${i.toString().padStart(6, "0")}`)
  const bytes: Array<number> = []
  const millis: Array<number> = []
  for (let r = 0; r < repeats; r++) {
    const before = heapUsed()
    const start = performance.now()
    const held = await subject.create(names)
    millis.push(performance.now() - start)
    const after = heapUsed()
    const expected = id === "circuitry-churn" ? Math.min(CHURN_BOUND, breakers) : breakers
    if (held.count() !== expected) throw new Error(`${id}: holds ${held.count()} breakers, expected ${expected}`)
    bytes.push((after - before) / breakers)
    await held.release()
  }
  return {
    id,
    label: subject.label,
    bytesPerBreaker: median(bytes),
    samples: bytes,
    breakers,
    createMillis: median(millis)
  }
}

export const run = async (id: string, repeats: number): Promise<MemoryGroup> => ({
  _tag: "Memory",
  group: `memory:${id}`,
  rows: [await measureSubject(id, scaled(BREAKERS), repeats)],
  notes: [
    `Each row: ${scaled(BREAKERS).toLocaleString("en")} breakers with distinct names, in a fresh process per row (one sample: the figure is deterministic to about 1%, as repeated samples showed while writing this benchmark); "make" is the time to create them, per breaker.`
  ]
})
