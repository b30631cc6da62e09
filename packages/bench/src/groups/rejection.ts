/**
 * The open-state rejection: each breaker is driven open by real failures (opossum by `open()`),
 * then every call is refused. The work counts its runs, and the group fails if any ran.
 */
import * as Edition from "@circuitry/core/Edition"
import type { CircuitBreakerPolicy } from "cockatiel"
import * as Effect from "effect/Effect"
import * as cases from "../cases.js"
import type { Case } from "../harness.js"
import { measure } from "../harness.js"
import type { TimedGroup } from "../protocol.js"
import { scaled } from "../protocol.js"
import type { Guard, Work } from "../subjects.js"
import * as S from "../subjects.js"

const failing: Work = Effect.fail("boom")

/** Feeds failures through `guard` until `isOpen` says so. */
const openEffect = (guard: Guard, isOpen: () => boolean): void => {
  for (let i = 0; i < 10_000 && !isOpen(); i++) Effect.runSync(Edition.result(guard(failing)))
  if (!isOpen()) throw new Error("could not open the breaker")
}

const openCockatiel = async (policy: CircuitBreakerPolicy): Promise<void> => {
  for (let i = 0; i < 10_000 && !S.cockatielOpen(policy); i++) {
    await policy.execute(() => Promise.reject(new Error("boom"))).catch(() => undefined)
  }
  if (!S.cockatielOpen(policy)) throw new Error("could not open the cockatiel breaker")
}

export const rejectionCases = async (work: Work, native: () => Promise<number>): Promise<ReadonlyArray<Case>> => {
  const floor = S.makeFloor()
  openEffect(floor.guard, floor.isOpen)
  const consecutive = S.makeCircuitry("consecutive")
  openEffect(consecutive.guard, consecutive.isOpen)
  const rate = S.makeCircuitry("rate")
  openEffect(rate.guard, rate.isOpen)
  const time = S.makeCircuitry("time")
  openEffect(time.guard, time.isOpen)
  const naive = await Effect.runPromise(S.makeNaive)
  openEffect(naive.guard, naive.isOpen)
  const [cockC, cockS, rawCockC, rawCockS] = [
    S.makeCockatiel("consecutive"),
    S.makeCockatiel("sampling"),
    S.makeCockatiel("consecutive"),
    S.makeCockatiel("sampling")
  ]
  for (const p of [cockC, cockS, rawCockC, rawCockS]) await openCockatiel(p)
  const opossumBridge = S.makeOpossumBridge()
  opossumBridge.breaker.open()
  const opossumRaw = S.makeOpossum(native)
  opossumRaw.open()
  const make = cases.inFiberFailing
  return [
    make("floor", "floor guard, open (a prebuilt error)", floor.guard, work),
    make("circuitry-consecutive", "circuitry withBreaker, consecutiveFailures(5), open", consecutive.guard, work),
    make("circuitry-rate", "circuitry withBreaker, failureRate(countWindow(100)), open", rate.guard, work),
    make("circuitry-time", "circuitry withBreaker, failureRate(timeWindow(10 s)), open", time.guard, work),
    make("naive", "naive Ref + Semaphore breaker, open", naive.guard, work),
    make(
      "cockatiel-consecutive-bridged",
      "cockatiel ConsecutiveBreaker, open, bridged",
      S.bridgeCockatiel(cockC),
      work
    ),
    make("cockatiel-sampling-bridged", "cockatiel SamplingBreaker, open, bridged", S.bridgeCockatiel(cockS), work),
    make("opossum-bridged", "opossum, open, bridged", opossumBridge.guard, work),
    cases.promiseLoopFailing("cockatiel-consecutive-raw", "cockatiel ConsecutiveBreaker, open, raw Promise", () =>
      rawCockC.execute(native)
    ),
    cases.promiseLoopFailing("cockatiel-sampling-raw", "cockatiel SamplingBreaker, open, raw Promise", () =>
      rawCockS.execute(native)
    ),
    cases.promiseLoopFailing("opossum-raw", "opossum, open, raw Promise", () => opossumRaw.fire())
  ]
}

export const run = async (): Promise<TimedGroup> => {
  let ran = 0
  const work: Work = Effect.sync(() => ++ran)
  const native = () => Promise.resolve(++ran)
  const rows = await measure(await rejectionCases(work, native), {
    calls: scaled(15_000),
    warmup: scaled(10_000),
    repeats: 13
  })
  if (ran !== 0) throw new Error(`an open breaker ran the work ${ran} times`)
  return {
    _tag: "Timed",
    group: "rejection",
    floor: "floor",
    rows,
    notes: [
      "Effect rows: many calls inside one Effect.gen loop, each `Effect.either(guard(work))`; Promise rows: an async for loop with try/catch.",
      "Each breaker was opened by real failures (opossum by `open()`); the work counts its runs and ran 0 times."
    ]
  }
}
