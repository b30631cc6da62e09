/**
 * The shortcuts the limiter takes on its sample path give the same limits as the plain step
 * functions: Gradient2's step against the step as first written (a long average returned as an
 * object), and the skipped step for a 0 ms round trip against the step it skips.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "fast-check"
import { Limit } from "@circuitry/limiter"
import { clamp, type Sample } from "../src/internal/algorithm.js"
import * as Gradient2 from "../src/internal/gradient2.js"

/** Gradient2's step as first written, kept as the reference. */
const referenceStep = (config: Gradient2.Config, state: Gradient2.State, sample: Sample): Gradient2.State => {
  const average = (): { value: number; count: number } => {
    if (state.count < 10) {
      return { value: (state.longRtt * state.count + sample.rtt) / (state.count + 1), count: state.count + 1 }
    }
    const factor = 2 / (config.longWindow + 1)
    return { value: state.longRtt * (1 - factor) + sample.rtt * factor, count: state.count }
  }
  const rtt = sample.rtt
  if (!(rtt > 0)) return state
  const queueSize = config.queueSize(Math.floor(state.estimate))
  const avg = average()
  // A call that started at the limit (half of it or more in use) does not raise the long average,
  // unless there is none yet or the limit is at its floor.
  const frozen =
    state.count > 0 && rtt > state.longRtt && sample.inflight * 2 >= state.estimate && state.estimate > config.min
  const longRtt = frozen ? state.longRtt : avg.value
  const count = frozen ? state.count : avg.count
  const decayed = longRtt / rtt > 2 ? longRtt * 0.95 : longRtt
  const estimate = state.estimate
  if (sample.inflight < estimate / 2) return { estimate, longRtt: decayed, count, lastRtt: rtt }
  const gradient = clamp((config.rttTolerance * longRtt) / rtt, 0.5, 1)
  let next = estimate * gradient + queueSize
  next = estimate * (1 - config.smoothing) + next * config.smoothing
  return { estimate: clamp(next, config.min, config.max), longRtt: decayed, count, lastRtt: rtt }
}

const sampleArb: fc.Arbitrary<Sample> = fc.record({
  start: fc.integer({ min: 0, max: 100_000 }),
  // Mostly short round trips, with zeros (a call within the Clock's resolution) and a few negatives.
  rtt: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: 1, max: 200 }), fc.double({ min: 0, max: 20_000 })),
  inflight: fc.integer({ min: 0, max: 400 }),
  drop: fc.boolean()
})

const gradient2Config: fc.Arbitrary<Gradient2.Config> = fc
  .record({
    min: fc.integer({ min: 1, max: 50 }),
    extra: fc.integer({ min: 0, max: 300 }),
    smoothing: fc.double({ min: 0.01, max: 1, noNaN: true }),
    longWindow: fc.integer({ min: 1, max: 1000 }),
    rttTolerance: fc.double({ min: 1, max: 3, noNaN: true }),
    queue: fc.oneof(fc.constant(4), fc.integer({ min: 0, max: 20 }), fc.constant(-1))
  })
  .map(({ extra, longWindow, min, queue, rttTolerance, smoothing }) => ({
    initial: min,
    min,
    max: min + extra,
    smoothing,
    longWindow,
    rttTolerance,
    // -1 stands for a function of the limit (as `queueSize: Math.sqrt`)
    queueSize: queue < 0 ? (limit: number) => Math.sqrt(limit) : () => queue
  }))

describe("the sample path's shortcuts", () => {
  it("Gradient2's step gives exactly the states of the reference step, sample after sample", () => {
    fc.assert(
      fc.property(gradient2Config, fc.array(sampleArb, { maxLength: 200 }), (config, samples) => {
        let state = Gradient2.make(config).initial
        let reference = state
        for (const sample of samples) {
          state = Gradient2.step(config, state, sample)
          reference = referenceStep(config, reference, sample)
          expect(state).toEqual(reference)
        }
      }),
      { numRuns: 300 }
    )
  })

  // As the limiter gets them: from the public constructors.
  const ignoring: ReadonlyArray<readonly [string, Limit.Limit]> = [
    ["gradient2", Limit.gradient2({ min: 5, max: 200 })],
    ["vegas", Limit.vegas({ min: 5, max: 200 })],
    ["windowed(aimd)", Limit.windowed(Limit.aimd({ min: 1 }), { minWindow: "100 millis" })],
    ["windowed(gradient2)", Limit.windowed(Limit.gradient2({ min: 5, longWindow: 60 }), { minWindow: "100 millis" })]
  ]

  it.each(ignoring)("%s ignoresZeroRtt: a round trip not > 0 gives back the same state, in any state", (_, limit) => {
    const algorithm = limit.makeAlgorithm()
    expect(algorithm.ignoresZeroRtt).toBe(true)
    fc.assert(
      fc.property(
        fc.array(sampleArb, { maxLength: 100 }),
        fc.integer({ min: -3, max: 0 }),
        fc.integer({ min: 0, max: 400 }),
        fc.boolean(),
        (samples, rtt, inflight, drop) => {
          let state = algorithm.initial
          for (const sample of samples) state = algorithm.step(state, sample)
          expect(algorithm.step(state, { start: 100_001, rtt, inflight, drop })).toBe(state)
        }
      ),
      { numRuns: 200 }
    )
  })

  it("AIMD does not ignore a 0 ms round trip (a drop there still backs off), so the limiter steps it", () => {
    const algorithm = Limit.aimd({ initial: 100, min: 1, max: 200, backoff: 0.9 }).makeAlgorithm()
    expect(algorithm.ignoresZeroRtt).toBeUndefined()
    expect(algorithm.limitOf(algorithm.step(algorithm.initial, { start: 0, rtt: 0, inflight: 1, drop: true }))).toBe(90)
    expect(Limit.fixed(10).makeAlgorithm().ignoresZeroRtt).toBeUndefined()
  })
})
