/**
 * A burst: 10,000 calls at once through a closed breaker, the work being one resolved Promise
 * (`Effect.promise` for the Effect rows), so that the calls are in flight together.
 */
import * as Effect from "effect/Effect"
import * as cases from "../cases.js"
import type { Case } from "../harness.js"
import { measure } from "../harness.js"
import type { TimedGroup } from "../protocol.js"
import { scaled } from "../protocol.js"
import type { Guard, Work } from "../subjects.js"
import * as S from "../subjects.js"

export const BURST = 10_000

export const burstCases = async (): Promise<ReadonlyArray<Case>> => {
  const native = () => Promise.resolve(1)
  const work: Work = Effect.promise(native)
  const bare: Guard = (self) => self
  const naive = await Effect.runPromise(S.makeNaive)
  const rawCockC = S.makeCockatiel("consecutive")
  const rawCockS = S.makeCockatiel("sampling")
  const opossumRaw = S.makeOpossum(native)
  const make = cases.burst
  return [
    make("bare", "the effect, bare (Effect.all, unbounded)", bare, work),
    make("floor", "floor guard", S.makeFloor().guard, work),
    make(
      "circuitry-consecutive",
      "circuitry withBreaker, consecutiveFailures(5)",
      S.makeCircuitry("consecutive").guard,
      work
    ),
    make("circuitry-rate", "circuitry withBreaker, failureRate(countWindow(100))", S.makeCircuitry("rate").guard, work),
    make("naive", "naive Ref + Semaphore breaker", naive.guard, work),
    make(
      "cockatiel-consecutive-bridged",
      "cockatiel ConsecutiveBreaker, bridged",
      S.bridgeCockatiel(S.makeCockatiel("consecutive")),
      work
    ),
    make(
      "cockatiel-sampling-bridged",
      "cockatiel SamplingBreaker, bridged",
      S.bridgeCockatiel(S.makeCockatiel("sampling")),
      work
    ),
    make("opossum-bridged", "opossum, bridged", S.makeOpossumBridge().guard, work),
    cases.promiseBurst("promise-bare", "a Promise function, bare (Promise.all)", native),
    cases.promiseBurst("cockatiel-consecutive-raw", "cockatiel ConsecutiveBreaker, raw Promise", () =>
      rawCockC.execute(native)
    ),
    cases.promiseBurst("cockatiel-sampling-raw", "cockatiel SamplingBreaker, raw Promise", () =>
      rawCockS.execute(native)
    ),
    cases.promiseBurst("opossum-raw", "opossum, raw Promise", () => opossumRaw.fire())
  ]
}

export const run = async (): Promise<TimedGroup> => {
  const rows = await measure(await burstCases(), { calls: scaled(BURST), warmup: scaled(BURST / 5), repeats: 7 })
  return {
    _tag: "Timed",
    group: "burst",
    floor: "floor",
    rows,
    notes: [
      `ns/call is the time for ${BURST.toLocaleString("en")} concurrent calls divided by ${BURST.toLocaleString("en")}.`
    ]
  }
}
