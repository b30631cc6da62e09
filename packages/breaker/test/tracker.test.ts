/**
 * The trackers behind each Policy, driven directly: window edges, slow calls, counts. Found by
 * mutation testing (see MUTANTS.md); the breaker-level behaviour is in Policy.test.ts.
 */
import { assert, describe, it } from "@circuitry/testkit"
import * as Tracker from "../src/internal/tracker.js"

const rate = (options?: Partial<Tracker.RateOptions>): Tracker.RateOptions => ({
  threshold: 0.5,
  minimumCalls: 1,
  slowMillis: undefined,
  slowThreshold: 1,
  ...options
})

const counts = (calls: number, failures: number, slowCalls: number, consecutiveFailures: number): Tracker.Counts => ({
  calls,
  failures,
  slowCalls,
  consecutiveFailures
})

describe("ConsecutiveFailures", () => {
  it("trips at the threshold of failures in a row; a success starts again; counts say so", () => {
    const t = new Tracker.ConsecutiveFailures(3)
    assert.isFalse(t.record(true))
    assert.isFalse(t.record(true))
    assert.isFalse(t.record(false))
    assert.deepStrictEqual(t.counts(), counts(3, 2, 0, 0))
    assert.isFalse(t.record(true))
    assert.isFalse(t.record(true))
    assert.deepStrictEqual(t.counts(), counts(5, 4, 0, 2))
    assert.isTrue(t.record(true))
    t.reset()
    assert.deepStrictEqual(t.counts(), counts(0, 0, 0, 0))
    assert.isFalse(t.record(true))
  })
})

describe("CountWindow", () => {
  it("trips when failures / calls reaches the threshold (equal counts), from minimumCalls", () => {
    const t = new Tracker.CountWindow(4, rate({ threshold: 0.5, minimumCalls: 2 }))
    assert.isFalse(t.record(true, 0, 0)) // 1 call: below minimumCalls
    assert.isTrue(t.record(false, 0, 0)) // 1 of 2 = 0.5 >= 0.5: a success can complete the verdict
    assert.deepStrictEqual(t.counts(), counts(2, 1, 0, 0))
    const v = new Tracker.CountWindow(4, rate({ threshold: 0.75, minimumCalls: 4 }))
    assert.isFalse(v.record(true, 0, 0))
    assert.isFalse(v.record(false, 0, 0))
    assert.isFalse(v.record(true, 0, 0)) // 2 of 3: below minimumCalls
    assert.isFalse(v.record(false, 0, 0)) // 2 of 4 < 0.75
    assert.isFalse(v.record(true, 0, 0)) // the first failure left: 2 of 4
    assert.deepStrictEqual(v.counts(), counts(4, 2, 0, 1))
    assert.isTrue(v.record(true, 0, 0)) // 3 of 4 = 0.75
    assert.deepStrictEqual(v.counts(), counts(4, 3, 0, 2))
  })

  it("old outcomes leave the window: failures, slow calls and the call count", () => {
    const t = new Tracker.CountWindow(2, rate({ threshold: 1, minimumCalls: 2, slowMillis: 100, slowThreshold: 1 }))
    t.record(true, 0, 500) // a slow failure
    assert.deepStrictEqual(t.counts(), counts(1, 1, 1, 1))
    t.record(false, 0, 0)
    assert.deepStrictEqual(t.counts(), counts(2, 1, 1, 0))
    t.record(false, 0, 0) // the slow failure leaves
    assert.deepStrictEqual(t.counts(), counts(2, 0, 0, 0))
    t.record(false, 0, 100) // exactly the limit is not slow
    assert.deepStrictEqual(t.counts(), counts(2, 0, 0, 0))
    t.record(false, 0, 101)
    assert.deepStrictEqual(t.counts(), counts(2, 0, 1, 0))
  })

  it("slow calls trip at their own rate (equal counts); without slowCall nothing is slow", () => {
    const t = new Tracker.CountWindow(4, rate({ threshold: 1, minimumCalls: 2, slowMillis: 100, slowThreshold: 0.5 }))
    assert.isFalse(t.record(false, 0, 500))
    assert.isTrue(t.record(false, 0, 0)) // 1 slow of 2 = 0.5
    const plain = new Tracker.CountWindow(4, rate({ threshold: 1, minimumCalls: 1 }))
    assert.isFalse(plain.record(false, 0, 1_000_000))
    assert.deepStrictEqual(plain.counts(), counts(1, 0, 0, 0))
  })

  it("reset empties the ring: what was recorded before never leaves it again", () => {
    const t = new Tracker.CountWindow(2, rate({ threshold: 1, minimumCalls: 2, slowMillis: 100 }))
    t.record(true, 0, 500)
    t.reset()
    assert.deepStrictEqual(t.counts(), counts(0, 0, 0, 0))
    t.record(false, 0, 0)
    t.record(false, 0, 0)
    t.record(true, 0, 0) // overwrites the first slot recorded after the reset
    assert.deepStrictEqual(t.counts(), counts(2, 1, 0, 1))
  })
})

describe("TimeWindow", () => {
  it("geometry: 20 buckets of duration / 20 (at least 1 ms each)", () => {
    assert.deepStrictEqual(Tracker.timeWindowGeometry(1_000), { width: 50, buckets: 20 })
    assert.deepStrictEqual(Tracker.timeWindowGeometry(45), { width: 3, buckets: 15 })
    assert.deepStrictEqual(Tracker.timeWindowGeometry(10), { width: 1, buckets: 10 })
    assert.deepStrictEqual(Tracker.timeWindowGeometry(1), { width: 1, buckets: 1 })
  })

  it("a bucket exactly one window old is evicted; one a bucket younger is not", () => {
    const t = new Tracker.TimeWindow(1_000, rate({ threshold: 1, minimumCalls: 5 }))
    t.record(true, 0, 0) // bucket 0
    assert.deepStrictEqual(t.counts(999), counts(1, 1, 0, 1)) // bucket 19: 0 is still in
    assert.deepStrictEqual(t.counts(1_000), counts(0, 0, 0, 1)) // bucket 20: 0 is out
  })

  it("counts calls, failures and slow calls per bucket, and drops them together", () => {
    const t = new Tracker.TimeWindow(
      1_000,
      rate({ threshold: 1, minimumCalls: 100, slowMillis: 100, slowThreshold: 1 })
    )
    t.record(true, 0, 200)
    t.record(false, 10, 50)
    t.record(false, 60, 101) // the next bucket
    t.record(false, 70, 100) // exactly the limit is not slow
    assert.deepStrictEqual(t.counts(70), counts(4, 1, 2, 0))
    assert.deepStrictEqual(t.counts(1_000), counts(2, 0, 1, 0)) // bucket 0 left
    assert.deepStrictEqual(t.counts(1_050), counts(0, 0, 0, 0)) // bucket 1 left
  })

  it("a slot reused after a full turn holds only the new bucket", () => {
    const t = new Tracker.TimeWindow(1_000, rate({ threshold: 1, minimumCalls: 100 }))
    t.record(true, 0, 0)
    t.record(true, 1_000, 0) // bucket 20: the same slot as bucket 0
    assert.deepStrictEqual(t.counts(1_000), counts(1, 1, 0, 2))
    t.record(false, 1_999, 0)
    assert.deepStrictEqual(t.counts(1_999), counts(2, 1, 0, 0))
  })

  it("trips on the failure rate or the slow rate, once minimumCalls calls are in the window", () => {
    const t = new Tracker.TimeWindow(1_000, rate({ threshold: 0.5, minimumCalls: 2 }))
    assert.isFalse(t.record(true, 0, 0))
    assert.isTrue(t.record(false, 0, 0)) // 1 of 2
    const slow = new Tracker.TimeWindow(
      1_000,
      rate({ threshold: 1, minimumCalls: 2, slowMillis: 10, slowThreshold: 0.5 })
    )
    assert.isFalse(slow.record(false, 0, 11))
    assert.isTrue(slow.record(false, 0, 0))
    const old = new Tracker.TimeWindow(1_000, rate({ threshold: 0.5, minimumCalls: 2 }))
    old.record(true, 0, 0)
    assert.isFalse(old.record(true, 1_000, 0)) // the first failure left: 1 call in the window
  })

  it("slow calls below the slow-call threshold keep it closed; reaching it trips", () => {
    const t = new Tracker.TimeWindow(
      1_000,
      rate({ threshold: 1, minimumCalls: 4, slowMillis: 100, slowThreshold: 0.5 })
    )
    assert.isFalse(t.record(false, 0, 200)) // slow, below minimumCalls
    assert.isFalse(t.record(false, 0, 0))
    assert.isFalse(t.record(false, 0, 0))
    assert.isFalse(t.record(false, 0, 0)) // 1 slow of 4 = 0.25 < 0.5
    assert.deepStrictEqual(t.counts(0), counts(4, 0, 1, 0))
    assert.isFalse(t.record(false, 0, 101)) // 2 slow of 5 = 0.4
    assert.isTrue(t.record(false, 0, 101)) // 3 slow of 6 = 0.5
  })

  it("the clock moving back, then forward within the window, keeps every bucket still in it", () => {
    const t = new Tracker.TimeWindow(1_000, rate({ threshold: 1, minimumCalls: 100 }))
    t.record(true, 500, 0) // bucket 10
    t.record(false, 250, 0) // the clock went back: bucket 5
    t.record(false, 550, 0) // forward to bucket 11: buckets 5 and 10 are still in the window
    assert.deepStrictEqual(t.counts(550), counts(3, 1, 0, 0))
    assert.deepStrictEqual(t.counts(1_275), counts(2, 1, 0, 0)) // bucket 25: 5 left, 10 and 11 are still in
  })

  it("reset empties every bucket", () => {
    const t = new Tracker.TimeWindow(1_000, rate({ threshold: 1, minimumCalls: 100, slowMillis: 1 }))
    t.record(true, 0, 5)
    t.reset()
    assert.deepStrictEqual(t.counts(0), counts(0, 0, 0, 0))
    t.record(false, 10, 0)
    // Nothing from before the reset is subtracted when its bucket leaves.
    assert.deepStrictEqual(t.counts(1_000), counts(0, 0, 0, 0))
    t.record(false, 1_000, 0)
    assert.deepStrictEqual(t.counts(1_000), counts(1, 0, 0, 0))
  })
})

describe("adopt (a registry's live config replaces a policy)", () => {
  it("a count window of the same size keeps everything; a smaller one the most recent calls, in order", () => {
    const old = new Tracker.CountWindow(5, rate({ slowMillis: 10 }))
    // oldest first: ok, fail, slow ok, fail, fail, then two more that push the first two out
    for (const [failure, duration] of [
      [false, 0],
      [true, 0],
      [false, 20],
      [true, 0],
      [true, 0],
      [false, 0],
      [true, 20]
    ] as const)
      old.record(failure, 0, duration)
    assert.deepStrictEqual(old.counts(), counts(5, 3, 2, 1))
    const same = new Tracker.CountWindow(5, rate({ threshold: 0.1, slowMillis: 10 }))
    assert.isTrue(same.adopt(old, 0))
    assert.deepStrictEqual(same.counts(), counts(5, 3, 2, 1))
    const smaller = new Tracker.CountWindow(3, rate({ slowMillis: 10 }))
    assert.isTrue(smaller.adopt(old, 0))
    assert.deepStrictEqual(smaller.counts(), counts(3, 2, 1, 1)) // fail, ok, slow fail
    // The ring goes on from there: the next call pushes out the oldest kept (a failure).
    smaller.record(false, 0, 0)
    assert.deepStrictEqual(smaller.counts(), counts(3, 1, 1, 0))
    const larger = new Tracker.CountWindow(10, rate())
    assert.isTrue(larger.adopt(old, 0))
    assert.deepStrictEqual(larger.counts(), counts(5, 3, 2, 1))
    larger.record(true, 0, 0)
    assert.deepStrictEqual(larger.counts(), counts(6, 4, 2, 2))
  })

  it("a larger count window goes on from the calls it kept: they leave it oldest first", () => {
    const old = new Tracker.CountWindow(3, rate())
    for (let i = 0; i < 3; i++) old.record(true, 0, 0)
    const larger = new Tracker.CountWindow(4, rate())
    larger.adopt(old, 0)
    for (let i = 0; i < 4; i++) larger.record(false, 0, 0)
    assert.deepStrictEqual(larger.counts(), counts(4, 0, 0, 0))
  })

  it("a time window takes only what the old one still holds at `now`, and drops buckets ahead of `now`", () => {
    const old = new Tracker.TimeWindow(10_000, rate())
    old.record(true, 0, 0)
    old.record(true, 8_000, 0)
    const longer = new Tracker.TimeWindow(60_000, rate())
    longer.adopt(old, 15_000) // the call at 0 s left the old window at 10 s: it does not come back
    assert.deepStrictEqual(longer.counts(15_000), counts(1, 1, 0, 2))
    const again = new Tracker.TimeWindow(10_000, rate())
    again.record(true, 0, 0)
    again.record(true, 8_000, 0)
    const back = new Tracker.TimeWindow(10_000, rate())
    back.adopt(again, 4_000) // the clock went back: the call at 8 s is ahead of now, the one at 0 s is kept
    assert.deepStrictEqual(back.counts(4_000), counts(1, 1, 0, 2))
  })

  it("a time window adopts no bucket exactly one of its windows old, and keeps one a bucket younger", () => {
    const old = new Tracker.TimeWindow(2_000, rate()) // 100 ms buckets: both calls are still in it at 1 s
    old.record(true, 0, 0)
    old.record(true, 50, 0)
    const shorter = new Tracker.TimeWindow(1_000, rate()) // 50 ms buckets
    shorter.adopt(old, 1_000) // its bucket 20: bucket 0 (the call at 0 ms) is exactly one window old
    assert.deepStrictEqual(shorter.counts(1_000), counts(0, 0, 0, 2))
    const later = new Tracker.TimeWindow(1_000, rate())
    later.adopt(old, 999) // its bucket 19: bucket 0 is still in
    assert.deepStrictEqual(later.counts(999), counts(2, 2, 0, 2))
  })

  it("a count window not yet full is copied from its start", () => {
    const old = new Tracker.CountWindow(10, rate())
    old.record(true, 0, 0)
    old.record(false, 0, 0)
    const next = new Tracker.CountWindow(1, rate())
    assert.isTrue(next.adopt(old, 0))
    assert.deepStrictEqual(next.counts(), counts(1, 0, 0, 0))
  })

  it("a time window keeps the buckets inside its duration, at its own resolution", () => {
    const old = new Tracker.TimeWindow(60_000, rate({ slowMillis: 10 }))
    old.record(true, 0, 0)
    old.record(false, 29_000, 20)
    old.record(true, 31_000, 0)
    old.record(true, 59_000, 20)
    const shorter = new Tracker.TimeWindow(30_000, rate())
    assert.isTrue(shorter.adopt(old, 59_500))
    // 29 s's bucket (27 s-30 s) starts before 29.5 s: out. 31 s (30 s-33 s) and 59 s (57 s-60 s): in.
    assert.deepStrictEqual(shorter.counts(59_500), counts(2, 2, 1, 2))
    // And it slides on by itself: at 61.5 s, the call at 31 s is out.
    assert.deepStrictEqual(shorter.counts(61_500), counts(1, 1, 1, 2))
    const longer = new Tracker.TimeWindow(120_000, rate())
    assert.isTrue(longer.adopt(old, 59_500))
    assert.deepStrictEqual(longer.counts(59_500), counts(4, 3, 2, 2))
    // Two old buckets may fall in one new one: their counts add up.
    const coarse = new Tracker.TimeWindow(600_000, rate()) // buckets of 30 s
    assert.isTrue(coarse.adopt(old, 59_500))
    assert.deepStrictEqual(coarse.counts(59_500), counts(4, 3, 2, 2))
    assert.deepStrictEqual(coarse.counts(599_999), counts(4, 3, 2, 2))
    assert.deepStrictEqual(coarse.counts(600_000), counts(2, 2, 1, 2)) // the bucket of 0 s-30 s left
  })

  it("consecutive failures carry over; windows of another kind start empty", () => {
    const old = new Tracker.ConsecutiveFailures(5)
    old.record(false)
    old.record(true)
    old.record(true)
    const next = new Tracker.ConsecutiveFailures(2)
    assert.isTrue(next.adopt(old))
    assert.deepStrictEqual(next.counts(), counts(3, 2, 0, 2))
    assert.isTrue(next.record(true)) // three in a row >= 2
    const count = new Tracker.CountWindow(5, rate())
    const time = new Tracker.TimeWindow(1_000, rate())
    assert.isFalse(count.adopt(old, 0))
    assert.isFalse(count.adopt(time, 0))
    assert.isFalse(time.adopt(count, 0))
    assert.isFalse(next.adopt(count))
    assert.deepStrictEqual(count.counts(), counts(0, 0, 0, 0))
    assert.deepStrictEqual(time.counts(0), counts(0, 0, 0, 0))
  })
})
