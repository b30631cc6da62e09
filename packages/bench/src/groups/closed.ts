/**
 * The closed path: the same effect bare, through the floor guard, through circuitry's breaker
 * (both policies), through a naive Ref + Semaphore breaker, and through the peers, raw and bridged.
 * `shape` says how calls are made: in one `Effect.gen` loop, or one `Effect.runPromise` per call.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as cases from "../cases.js"
import type { Case } from "../harness.js"
import { measure } from "../harness.js"
import type { TimedGroup } from "../protocol.js"
import { scaled } from "../protocol.js"
import type { Guard, Work } from "../subjects.js"
import * as S from "../subjects.js"

export const closedCases = async (shape: "in-fiber" | "per-call"): Promise<ReadonlyArray<Case>> => {
  const work: Work = Effect.succeed(1)
  const native = () => Promise.resolve(1)
  const make = shape === "in-fiber" ? cases.inFiber : cases.perCall
  const bare: Guard = (self) => self
  const naive = await Effect.runPromise(S.makeNaive)
  const cockC = S.makeCockatiel("consecutive")
  const cockS = S.makeCockatiel("sampling")
  const rawCockC = S.makeCockatiel("consecutive")
  const rawCockS = S.makeCockatiel("sampling")
  const opossumRaw = S.makeOpossum(native)
  // What reading the breaker's state through Effect 3's public Ref API (`Ref.get`, an effect) would
  // add to every closed call: Effect 3 has no synchronous read (docs/editions.md, breaker).
  const state = Effect.runSync(Ref.make(0))
  const consecutive = S.makeCircuitry("consecutive").guard
  const behindRef: Guard = (self) => Effect.flatMap(Ref.get(state), () => consecutive(self))
  return [
    make("bare", "the effect, bare", bare, work),
    make("floor", "floor guard (suspend + catchAllCause(map))", S.makeFloor().guard, work),
    make(
      "circuitry-consecutive",
      "circuitry withBreaker, consecutiveFailures(5)",
      S.makeCircuitry("consecutive").guard,
      work
    ),
    make("circuitry-ref-get", "circuitry withBreaker, consecutiveFailures(5), behind a Ref.get", behindRef, work),
    make("circuitry-rate", "circuitry withBreaker, failureRate(countWindow(100))", S.makeCircuitry("rate").guard, work),
    make("circuitry-time", "circuitry withBreaker, failureRate(timeWindow(10 s))", S.makeCircuitry("time").guard, work),
    make("naive", "naive Ref + Semaphore breaker", naive.guard, work),
    make("cockatiel-consecutive-bridged", "cockatiel ConsecutiveBreaker, bridged", S.bridgeCockatiel(cockC), work),
    make("cockatiel-sampling-bridged", "cockatiel SamplingBreaker, bridged", S.bridgeCockatiel(cockS), work),
    make("opossum-bridged", "opossum, bridged", S.makeOpossumBridge().guard, work),
    cases.promiseLoop("promise-bare", "a Promise function, bare (no Effect)", native),
    cases.promiseLoop("cockatiel-consecutive-raw", "cockatiel ConsecutiveBreaker, raw Promise", () =>
      rawCockC.execute(native)
    ),
    cases.promiseLoop("cockatiel-sampling-raw", "cockatiel SamplingBreaker, raw Promise", () =>
      rawCockS.execute(native)
    ),
    cases.promiseLoop("opossum-raw", "opossum, raw Promise", () => opossumRaw.fire())
  ]
}

export const run = async (shape: "in-fiber" | "per-call"): Promise<TimedGroup> => {
  const rows = await measure(await closedCases(shape), {
    calls: scaled(shape === "in-fiber" ? 20_000 : 8_000),
    warmup: scaled(10_000),
    repeats: 15
  })
  return {
    _tag: "Timed",
    group: shape,
    floor: "floor",
    rows,
    notes:
      shape === "in-fiber"
        ? ["Effect rows: many calls inside one Effect.gen loop; Promise rows: an async for loop awaiting each call."]
        : ["Effect rows: one Effect.runPromise per call, awaited in turn; Promise rows: an async for loop."]
  }
}
