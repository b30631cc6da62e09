/**
 * What the suites of the breaker store's capabilities share (breakerStore.ts registers them): fresh
 * circuit names, verdicts and how a read-back one is compared (aged by the store's clock, within
 * SLACK), waiting for delivery, joining a circuit, and taking a capability the backend offers.
 */
import * as Edition from "@circuitry/core/Edition"
import type { BreakerStore } from "@circuitry/breaker"
import { BreakerStore as Store } from "@circuitry/breaker"
import { assert, layer as sharedLayer, TestClock, yieldNow } from "@circuitry/testkit"
import { Effect, Fiber, Option, Stream } from "effect"
import type { Scope } from "effect"

let counter = 0
/** A circuit name no other test (or earlier run on a shared server) uses. */
export const freshName = (): string => `suite-${process.pid}-${Date.now().toString(36)}-${counter++}`

/** A verdict as a member sends it: made `ageMillis` ago, open for 10 s more when Open. */
export const verdict = (
  state: BreakerStore.Verdict["state"],
  origin = "a",
  more?: { readonly ageMillis?: number; readonly remainingMillis?: number; readonly by?: string }
): BreakerStore.Verdict => ({
  state,
  remainingMillis: state === "Open" ? (more?.remainingMillis ?? 10_000) : 0,
  ageMillis: more?.ageMillis ?? 0,
  origin,
  ...(more?.by === undefined ? undefined : { by: more.by })
})

/**
 * How much real time a read may follow a save by on a busy machine (the load average may be 10+).
 * A store that dated a verdict on a member's clock, or not at all, is off by far more.
 */
export const SLACK = 2_000

/**
 * Whether `actual` is `expected` read back later by the store's clock: the same state, origin and
 * `by`; at most `elapsed + SLACK` less time left and at most that much older, and at least
 * `elapsed` (time the store's clock is known to have moved) older.
 */
export const agedFrom = (
  actual: BreakerStore.Verdict,
  expected: BreakerStore.Verdict,
  elapsed = 0
): string | undefined => {
  const problems: Array<string> = []
  if (actual.state !== expected.state || actual.origin !== expected.origin || actual.by !== expected.by) {
    problems.push("state, origin or by differ")
  }
  const aged = actual.ageMillis - expected.ageMillis
  if (aged < elapsed || aged > elapsed + SLACK)
    problems.push(`aged ${aged} ms, expected ${elapsed}..${elapsed + SLACK}`)
  const spent = expected.remainingMillis - actual.remainingMillis
  if (expected.state === "Open" && expected.remainingMillis > elapsed + SLACK) {
    if (spent < elapsed || spent > elapsed + SLACK) problems.push(`${spent} ms of the open time spent`)
  } else if (actual.remainingMillis !== 0 && expected.state !== "Open") {
    problems.push("time left on a verdict that is not Open")
  }
  return problems.length === 0
    ? undefined
    : `${problems.join("; ")}: ${JSON.stringify(actual)} read back from ${JSON.stringify(expected)}`
}

export const assertAged = (
  actual: Option.Option<BreakerStore.Verdict>,
  expected: BreakerStore.Verdict,
  elapsed = 0
) => {
  assert.isTrue(Option.isSome(actual), `nothing stored, expected ${JSON.stringify(expected)}`)
  if (Option.isSome(actual)) {
    const problem = agedFrom(actual.value, expected, elapsed)
    assert.isUndefined(problem, problem)
  }
}

export const assertAllAged = (
  actual: ReadonlyArray<BreakerStore.Verdict>,
  expected: ReadonlyArray<BreakerStore.Verdict>
) => {
  assert.strictEqual(actual.length, expected.length, JSON.stringify(actual))
  actual.forEach((v, i) => assertAged(Option.some(v), expected[i]!))
}

/** Moves the store's clock by `millis`: the TestClock (the memory store's) and real time (a server's). */
export const pass = (millis: number) =>
  Effect.andThen(
    TestClock.adjust(millis),
    Effect.promise(() => new Promise((resolve) => setTimeout(resolve, millis)))
  )

/** Lets forked fibers start (a stream subscribes when it first runs). */
export const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* yieldNow
})

/**
 * The next `n` verdicts a member is told, collected in the background. Delivery may cross a
 * network (Redis pub/sub): joining waits for it in real time, bounded by the test's timeout.
 */
export const listen = (circuit: BreakerStore.VerdictChannel, n: number) =>
  Effect.gen(function* () {
    const fiber = yield* Edition.forkChild(Stream.runCollect(Stream.take(circuit.watch, n)))
    yield* settle
    return Effect.map(Fiber.join(fiber), (values) => Array.from(values))
  })

/** Every verdict a member is told from now on, as it is told (a background fiber of the scope). */
export const collect = (circuit: BreakerStore.VerdictChannel) =>
  Effect.gen(function* () {
    const told: Array<BreakerStore.Verdict> = []
    yield* Effect.forkScoped(Stream.runForEach(circuit.watch, (v) => Effect.sync(() => told.push(v))))
    yield* settle
    return told
  })

/** Waits (in real time: delivery may cross a network) until `done` holds, for at most 10 seconds. */
export const eventually = (done: () => boolean) =>
  Effect.gen(function* () {
    for (let i = 0; i < 1_000 && !done(); i++) {
      yield* settle
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    assert.isTrue(done(), "not reached within 10 seconds")
  })

/** Joins `name` on the store in the context, for as long as the scope lasts. */
export const join = (
  name: string
): Effect.Effect<BreakerStore.SharedCircuit, BreakerStore.BreakerStoreError, Scope.Scope | Store.BreakerStore> =>
  Effect.flatMap(Store.BreakerStore, (store) => store.connect(name))

export const lease = { permits: 1, leaseMillis: 60_000 } as const

/**
 * How a backend spoils a circuit's stored state the way an old schema, a foreign writer or a hand
 * edit does: each entry writes, under `name`, state the store cannot read. A backend that can be
 * spoiled provides it beside its store and passes `{ corruptible: true }`.
 */
export class Corruptions extends Edition.KeyClass<
  Corruptions,
  ReadonlyArray<readonly [kind: string, spoil: (name: string) => Effect.Effect<void>]>
>()("storeSuite/Corruptions") {}

/** The `it` of a backend's suite: its tests share the backend's layer (the store, and `Corruptions` when it has them). */
export type SuiteIt = Parameters<
  Parameters<ReturnType<typeof sharedLayer<BreakerStore.BreakerStore | Corruptions, unknown>>>[1]
>[0]

/** The capability `capability` of `circuit`, which the backend says it offers (breakerStore.ts checks it does). */
export const offered = <K extends BreakerStore.Capability>(
  circuit: BreakerStore.SharedCircuit,
  capability: K
): NonNullable<BreakerStore.SharedCircuit[K]> => {
  const found = circuit[capability]
  assert.isDefined(found, `the store offers no ${capability}`)
  return found!
}
