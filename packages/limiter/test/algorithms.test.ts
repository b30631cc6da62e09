/**
 * Each step function against worked examples: Netflix concurrency-limits' own unit tests where they
 * have them (AIMDLimitTest, VegasLimitTest), and the formulas worked by hand for Gradient2 and
 * WindowedLimit (which have none there).
 */
import { describe, expect, it } from "@effect/vitest"
import type { Algorithm, Sample } from "../src/internal/algorithm.js"
import * as Aimd from "../src/internal/aimd.js"
import * as Gradient2 from "../src/internal/gradient2.js"
import * as Paced from "../src/internal/paced.js"
import * as Vegas from "../src/internal/vegas.js"
import * as Windowed from "../src/internal/windowed.js"

const sample = (rtt: number, inflight: number, drop = false, start = 0): Sample => ({ start, rtt, inflight, drop })

describe("AIMD (AIMDLimitTest)", () => {
  const config = (over: Partial<Aimd.Config> = {}): Aimd.Config => ({
    initial: 20,
    min: 20,
    max: 200,
    backoff: 0.9,
    timeoutMillis: 5000,
    rttTolerance: undefined,
    ...over
  })
  /** The limit after one sample from a limit of `limit` (AIMDLimitTest's state is the limit alone). */
  const after = (c: Aimd.Config, limit: number, s: Sample): number =>
    Aimd.step(c, { limit, base: Infinity, previousBase: Infinity }, s).limit

  it("testDefault: starts at the initial limit", () => {
    expect(Aimd.make(config({ initial: 10, min: 1 })).initial.limit).toBe(10)
  })

  it("increaseOnSuccess: 20 -> 21 with 10 in flight (2 * 10 >= 20)", () => {
    expect(after(config(), 20, sample(1, 10))).toBe(21)
  })

  it("decreaseOnDrops: 30 -> 27", () => {
    expect(after(config(), 30, sample(0, 0, true))).toBe(27)
  })

  it("successOverflow: stays at max 21", () => {
    expect(after(config({ initial: 21, max: 21, min: 1 }), 21, sample(1, 10))).toBe(21)
  })

  it("a call slower than the timeout is a drop; a lightly used limit does not grow", () => {
    expect(after(config(), 100, sample(5001, 100))).toBe(90)
    expect(after(config(), 100, sample(10, 49))).toBe(100)
    expect(after(config(), 100, sample(10, 50))).toBe(101)
    expect(after(config(), 21, sample(10, 50, true))).toBe(20) // floor(18.9) = 18, held at min 20
  })
})

describe("AIMD with rttTolerance (the default without a timeout)", () => {
  const c: Aimd.Config = { initial: 20, min: 1, max: 200, backoff: 0.5, timeoutMillis: Infinity, rttTolerance: 1.5 }
  const run = (samples: ReadonlyArray<Sample>): Array<Aimd.State> => {
    let state = Aimd.make(c).initial
    return samples.map((s) => (state = Aimd.step(c, state, s)))
  }

  it("a call slower than 1.5x the base round trip plus 1 ms is a drop: at 20 ms, 32 ms is, 31 ms is not", () => {
    const [, ok, slow] = run([sample(20, 20), sample(31, 20), sample(32, 20)])
    expect(ok!.limit).toBe(22) // 20 -> 21 -> 22: 31 <= 1.5 x 20 + 1
    expect(slow!.limit).toBe(11) // floor(22 x 0.5)
  })

  it("the base is the lowest round trip of this congestion cycle and the one before: it follows a slower dependency", () => {
    const states = run([
      sample(20, 20), // base 20
      sample(40, 20), // drop: cycle 1 (base 20) ends
      sample(40, 20), // drop again: the base is still 20 (cycle 1's); cycle 2 (base 40) ends
      sample(40, 20), // 40 <= 1.5 x min(40, 40) + 1: no drop
      sample(0, 20) // a 0 ms round trip carries no latency and is no base
    ])
    expect(states.map((s) => s.limit)).toEqual([21, 10, 5, 6, 7])
    expect(states[3]!.base).toBe(40)
    expect(states[4]!.base).toBe(40)
  })
})

describe("Vegas (VegasLimitTest)", () => {
  const config = (over: Partial<Vegas.Config> = {}): Vegas.Config => ({
    initial: 20,
    min: 1,
    max: 1000,
    alpha: (l) => 3 * Vegas.log10Root(l),
    beta: (l) => 6 * Vegas.log10Root(l),
    threshold: Vegas.log10Root,
    increase: (l) => l + Vegas.log10Root(l),
    decrease: (l) => l - Vegas.log10Root(l),
    smoothing: 1,
    probeMultiplier: 30,
    ...over
  })
  // VegasLimitTest.create(): alpha 3, beta 6, smoothing 1, initial 10, max 20
  const create = () => config({ alpha: () => 3, beta: () => 6, initial: 10, max: 20 })
  const run = (c: Vegas.Config, samples: ReadonlyArray<Sample>): Array<number> => {
    const algorithm = Vegas.make(c)
    let state = algorithm.initial
    return samples.map((s) => algorithm.limitOf((state = algorithm.step(state, s))))
  }

  it("largeLimitIncrease: 10000 -> 10024", () => {
    expect(run(config({ initial: 10000, max: 20000 }), [sample(10_000, 5000), sample(10_000, 6000)])).toEqual([
      10000, 10024
    ])
  })

  it("increaseLimit: the first sample sets the base, then 10 -> 16", () => {
    expect(run(create(), [sample(10, 10), sample(10, 11)])).toEqual([10, 16])
  })

  it("decreaseLimit: 10 -> 9 when the round trip is 5x the base", () => {
    expect(run(create(), [sample(10, 10), sample(50, 11)])).toEqual([10, 9])
  })

  it("noChangeIfWithinThresholds", () => {
    expect(run(create(), [sample(10, 10), sample(14, 14)])).toEqual([10, 10])
  })

  it("decreaseSmoothing: 100 -> 75 -> 56", () => {
    const c = config({ decrease: (l) => l / 2, smoothing: 0.5, initial: 100, max: 200 })
    expect(run(c, [sample(10, 100), sample(20, 100), sample(20, 100)])).toEqual([100, 75, 56])
  })

  it("decreaseWithoutSmoothing: 100 -> 50 -> 25", () => {
    const c = config({ decrease: (l) => l / 2, initial: 100, max: 200 })
    expect(run(c, [sample(10, 100), sample(20, 100), sample(20, 100)])).toEqual([100, 50, 25])
  })

  it("a drop decreases; a limit far from use does not drift up; a zero round trip changes nothing", () => {
    expect(run(create(), [sample(10, 10), sample(10, 10, true)])).toEqual([10, 9])
    expect(run(create(), [sample(10, 10), sample(10, 4)])).toEqual([10, 10])
    const algorithm = Vegas.make(create())
    expect(algorithm.step(algorithm.initial, sample(0, 10))).toBe(algorithm.initial)
  })

  it("probes a new base about every probeMultiplier * limit samples (jitter in [0.5, 1))", () => {
    const algorithm = Vegas.make(config({ initial: 10, max: 10, probeMultiplier: 2 }))
    let state = algorithm.initial
    state = algorithm.step(state, sample(10, 10)) // base 10
    let probedAt = -1
    for (let i = 1; i <= 20 && probedAt < 0; i++) {
      // 4 in flight: under half the limit, so the round trip holds no queue of the limit's making
      state = algorithm.step(state, sample(40, 4))
      if (state.rttNoLoad === 40) probedAt = i + 1
    }
    // 2 * 10 * jitter <= count: between 10 and 20 samples
    expect(probedAt).toBeGreaterThanOrEqual(10)
    expect(probedAt).toBeLessThanOrEqual(20)
    expect(state.probeJitter).toBeGreaterThanOrEqual(0.5)
    expect(state.probeJitter).toBeLessThan(1)
  })

  it("a probe waits for a call that started with under half the limit in use, or at the floor", () => {
    const algorithm = Vegas.make(config({ initial: 10, max: 10, probeMultiplier: 2 }))
    let state = algorithm.step(algorithm.initial, sample(10, 10)) // base 10
    // At the limit for longer than the probe interval (at most 20 samples): the base stays.
    for (let i = 0; i < 40; i++) state = algorithm.step(state, sample(12, 10))
    expect(state.rttNoLoad).toBe(10)
    state = algorithm.step(state, sample(12, 4))
    expect(state.rttNoLoad).toBe(12)
    // At the floor the queue is the dependency's own: the probe takes it.
    const floor = Vegas.make(config({ initial: 1, min: 1, max: 10, probeMultiplier: 2 }))
    let low = floor.step(floor.initial, sample(10, 1))
    for (let i = 0; i < 40 && low.rttNoLoad === 10; i++) low = floor.step(low, sample(200, 1))
    expect(low.rttNoLoad).toBe(200)
  })

  it("log10Root is Log10RootIntFunction: max(1, floor(log10(n)))", () => {
    expect([0, 1, 9, 10, 99, 100, 999, 1000, 12345].map(Vegas.log10Root)).toEqual([1, 1, 1, 1, 1, 2, 2, 3, 4])
  })
})

describe("Gradient2 (the formula of Gradient2Limit, worked by hand)", () => {
  const config = (over: Partial<Gradient2.Config> = {}): Gradient2.Config => ({
    initial: 20,
    min: 20,
    max: 200,
    smoothing: 0.2,
    longWindow: 600,
    rttTolerance: 1.5,
    queueSize: () => 4,
    ...over
  })

  it("steady round trips grow the limit by smoothing * queueSize per sample: 20 -> 20.8 -> 21.64", () => {
    const algorithm = Gradient2.make(config())
    const s1 = algorithm.step(algorithm.initial, sample(10, 20))
    // gradient = clamp(1.5 * 10 / 10, 0.5, 1) = 1; 20 * 0.8 + (20 * 1 + 4) * 0.2 = 20.8
    expect(s1.estimate).toBeCloseTo(20.8, 10)
    expect(s1.longRtt).toBe(10)
    const s2 = algorithm.step(s1, sample(10, 20))
    // 20.8 * 0.8 + (20.8 + 4) * 0.2 = 21.6
    expect(s2.estimate).toBeCloseTo(21.6, 10)
    expect(algorithm.limitOf(s2)).toBe(21)
  })

  it("a round trip far above the long average halves the gradient (never less than 0.5)", () => {
    const c = config({ initial: 100, max: 200 })
    const algorithm = Gradient2.make(c)
    const warm = algorithm.step(algorithm.initial, sample(10, 100)) // estimate 100*0.8 + 104*0.2 = 100.8
    expect(warm.estimate).toBeCloseTo(100.8, 10)
    // From a call under half the limit the long average learns: warm-up mean (10 + 100) / 2 = 55.
    const learnt = algorithm.step(warm, sample(100, 40))
    expect(learnt.longRtt).toBeCloseTo(55, 10)
    expect(learnt.estimate).toBe(warm.estimate) // app limited
    // At the limit, it does not: the long average stays 10, gradient = clamp(1.5 * 10 / 100) = 0.5.
    const slow = algorithm.step(warm, sample(100, 100))
    expect(slow.longRtt).toBe(10)
    expect(slow.estimate).toBeCloseTo(100.8 * 0.8 + (100.8 * 0.5 + 4) * 0.2, 10)
    // From learnt: gradient = clamp(1.5 * 55 / 100) = 0.825; 100.8 * 0.8 + (100.8 * 0.825 + 4) * 0.2 = 98.072
    expect(algorithm.step(learnt, sample(100, 100)).estimate).toBeCloseTo(98.072, 10)
  })

  it("the long average does not follow the queue the limit lets build, except at the floor", () => {
    const algorithm = Gradient2.make(config({ initial: 40, min: 20, max: 200 }))
    let state = algorithm.step(algorithm.initial, sample(20, 40)) // the first sample sets it: 20
    for (let i = 0; i < 100; i++) state = algorithm.step(state, sample(34, 40))
    expect(state.longRtt).toBe(20)
    // A faster round trip is learnt at the limit too: 20 * 0.8 + 10 * 0.2 (longWindow 9 after warm-up).
    const quick = Gradient2.make(config({ initial: 40, min: 20, longWindow: 9 }))
    let q = quick.initial
    for (let i = 0; i < 10; i++) q = quick.step(q, sample(20, 40))
    expect(quick.step(q, sample(10, 40)).longRtt).toBeCloseTo(18, 10)
    // At min, the limit cannot take the queue down: the round trip is the dependency's, and learnt.
    const floor = Gradient2.make(config({ initial: 20, min: 20, max: 20 }))
    const f = floor.step(floor.step(floor.initial, sample(20, 20)), sample(60, 20))
    expect(f.longRtt).toBeCloseTo(40, 10)
  })

  it("after the 10-sample warm-up the long average is exponential with factor 2 / (longWindow + 1)", () => {
    const algorithm = Gradient2.make(config({ longWindow: 9 }))
    let state = algorithm.initial
    for (let i = 0; i < 10; i++) state = algorithm.step(state, sample(10, 20))
    expect(state.longRtt).toBe(10)
    state = algorithm.step(state, sample(20, 5)) // under half the limit: learnt
    expect(state.longRtt).toBeCloseTo(10 * 0.8 + 20 * 0.2, 10) // factor 2 / 10
  })

  it("app limited: under half the limit in use, the limit stays; a 2x-lower round trip decays the long average by 5%", () => {
    const algorithm = Gradient2.make(config({ initial: 100 }))
    let state = algorithm.initial
    state = algorithm.step(state, sample(100, 100))
    const idle = algorithm.step(state, sample(10, 10))
    expect(idle.estimate).toBe(state.estimate)
    // mean (100 + 10) / 2 = 55 > 2 * 10: decayed to 52.25
    expect(idle.longRtt).toBeCloseTo(55 * 0.95, 10)
  })

  it("stays within [min, max]; a zero round trip changes nothing", () => {
    const algorithm = Gradient2.make(config({ initial: 20, min: 20, max: 21 }))
    let state = algorithm.initial
    for (let i = 0; i < 50; i++) state = algorithm.step(state, sample(10, 21))
    expect(state.estimate).toBe(21)
    for (let i = 0; i < 50; i++) state = algorithm.step(state, sample(10_000, 21))
    expect(state.estimate).toBeGreaterThanOrEqual(20)
    expect(algorithm.step(state, sample(0, 21))).toBe(state)
  })
})

describe("Windowed (WindowedLimit over an average sample window)", () => {
  const config: Windowed.Config = { minWindowMillis: 100, maxWindowMillis: 1000, windowSize: 10 }
  const inner = Aimd.make({ initial: 10, min: 1, max: 100, backoff: 0.5, timeoutMillis: 5000, rttTolerance: undefined })

  it("a window of 10 slow calls is one drop (one decrease), not ten", () => {
    const algorithm = Windowed.make(config, inner)
    let state = algorithm.initial
    // The first sample ends past nextUpdate 0: it closes an (unready) window of one and sets the next end.
    state = algorithm.step(state, sample(10, 10, true, 0))
    expect(algorithm.limitOf(state)).toBe(10)
    expect(state.nextUpdate).toBe(10 + 100) // end 10 + max(2 x 10, 100)
    for (let i = 0; i < 10; i++) state = algorithm.step(state, sample(20, 10, true, 20 + i))
    // These end by 49 <= 110: still gathering.
    expect(algorithm.limitOf(state)).toBe(10)
    state = algorithm.step(state, sample(80, 10, true, 40)) // ends at 120 > 110: the window closes
    expect(algorithm.limitOf(state)).toBe(5)
    expect(state.count).toBe(0)
  })

  it("the window's sample is the average round trip and the most in flight; a window under windowSize is dropped", () => {
    let seen: Sample | undefined
    const spy: Algorithm<number> = { initial: 0, step: (s, x) => ((seen = x), s + 1), limitOf: () => 1 }
    const algorithm = Windowed.make(config, spy)
    let state = algorithm.step(algorithm.initial, sample(10, 1, false, 0)) // closes an unready window
    expect(state.inner).toBe(0)
    for (let i = 0; i < 10; i++) state = algorithm.step(state, sample(10 + i, i + 1, false, 10))
    state = algorithm.step(state, sample(100, 3, false, 50)) // ends at 150 > 110
    expect(state.inner).toBe(1)
    expect(seen).toEqual({ start: 50, rtt: (145 + 100) / 11, inflight: 10, drop: false })
    // The next window lasts max(2 x lowest (10), 100) = 100 ms from 150.
    expect(state.nextUpdate).toBe(250)
  })
})

describe("Paced (one update per round trip, as Limit.aimd, gradient2 and vegas run)", () => {
  const c: Aimd.Config = { initial: 10, min: 1, max: 100, backoff: 0.5, timeoutMillis: 5000, rttTolerance: undefined }
  const algorithm = Paced.make(Aimd.make(c))
  const run = (samples: ReadonlyArray<Sample>): Array<number> => {
    let state = algorithm.initial
    return samples.map((s) => algorithm.limitOf((state = algorithm.step(state, s))))
  }

  it("a sample from a call that started before the last update is skipped; one from a call after it is not", () => {
    expect(
      run([
        sample(100, 10, true, 0), // the first drop backs off at 100: 10 -> 5
        sample(100, 10, true, 50), // started at 50, before the backoff: the same congestion event
        sample(20, 5, false, 90), // started before it too: no increase
        sample(20, 5, false, 100), // admitted at the backoff: 5 -> 6, the next round starts at 120
        sample(20, 6, false, 110), // started before 120: skipped
        sample(20, 6, true, 120) // a new event: 6 -> 3
      ])
    ).toEqual([5, 5, 5, 6, 6, 3])
  })

  const g2: Gradient2.Config = {
    initial: 20,
    min: 20,
    max: 200,
    smoothing: 0.2,
    longWindow: 600,
    rttTolerance: 1.5,
    queueSize: () => 4
  }

  it("a sample that changes nothing does not start a round; the inner's zero-rtt shortcut is kept", () => {
    // 2 in flight of 10: no growth, so the state stays and the next sample is taken whenever it started.
    expect(run([sample(20, 2, false, 100), sample(20, 10, false, 0)])).toEqual([10, 11])
    expect(Paced.make(Gradient2.make(g2)).ignoresZeroRtt).toBe(true)
    expect(algorithm.ignoresZeroRtt).toBeUndefined()
  })
})
