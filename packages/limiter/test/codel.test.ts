/**
 * The shedding rule, driven directly (it is given `now` and holds no Effect services): each case by
 * name, then a property over random waits and times.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Codel from "../src/internal/codel.js"

const rule: Codel.Rule = { target: 50, interval: 500 }

describe("the shedding rule (CoDel's target and interval)", () => {
  it("a wait within target is served, whether the queue stands or not", () => {
    const state = Codel.empty(0)
    assert.strictEqual(Codel.decide(rule, state, 10, 50), "admit")
    assert.strictEqual(Codel.decide(rule, state, 10_000, 50), "admit")
  })

  it("a burst: past target but within interval is served while the queue was empty less than an interval ago", () => {
    const state = Codel.empty(1_000)
    assert.strictEqual(Codel.decide(rule, state, 1_000, 51), "admit")
    assert.strictEqual(Codel.decide(rule, state, 1_499, 500), "admit")
  })

  it("a standing queue: once it has not been empty for a whole interval, a wait past target is shed", () => {
    const state = Codel.empty(1_000)
    assert.isFalse(Codel.isStanding(rule, state, 1_499))
    assert.isTrue(Codel.isStanding(rule, state, 1_500))
    assert.strictEqual(Codel.decide(rule, state, 1_500, 51), "standing")
    assert.strictEqual(Codel.decide(rule, state, 1_500, 50), "admit")
  })

  it("past interval a request is overdue, even in a burst", () => {
    const state = Codel.empty(1_000)
    assert.strictEqual(Codel.decide(rule, state, 1_000, 501), "overdue")
    assert.strictEqual(Codel.decide(rule, state, 9_000, 501), "overdue")
  })

  it("seeing the queue empty again ends the standing state", () => {
    const before = Codel.empty(0)
    assert.strictEqual(Codel.decide(rule, before, 2_000, 100), "standing")
    const after = Codel.empty(2_000)
    assert.strictEqual(Codel.decide(rule, after, 2_000, 100), "admit")
    assert.strictEqual(Codel.decide(rule, after, 2_500, 100), "standing")
  })

  it("property: no wait past interval is served, none within target is shed, and between them the verdict is whether the queue stands", () =>
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 0, max: 2_000, noNaN: true }),
        (lastEmpty, elapsed, waited) => {
          const verdict = Codel.decide(rule, Codel.empty(lastEmpty), lastEmpty + elapsed, waited)
          if (waited > rule.interval) return verdict === "overdue"
          if (waited <= rule.target) return verdict === "admit"
          return verdict === (elapsed >= rule.interval ? "standing" : "admit")
        }
      )
    ))
})
