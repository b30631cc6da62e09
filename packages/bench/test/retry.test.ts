import { assert, describe, it } from "@effect/vitest"
import { hedgingCases, retryCases, verdicts } from "../src/groups/retry.js"
import type { GroupResult, TimedGroup } from "../src/protocol.js"

const timed = (group: string, rows: Record<string, number>): TimedGroup => ({
  _tag: "Timed",
  group,
  floor: "bare",
  notes: [],
  rows: Object.entries(rows).map(([id, ns]) => ({
    id,
    label: id,
    nsPerCall: ns,
    wallNsPerCall: ns,
    spread: 0,
    samples: [ns],
    callsPerSample: 1
  }))
})

describe("retry and hedging groups", () => {
  it("every row completes its calls", async () => {
    for (const c of await retryCases()) await c.run(3)
    const hedging = await hedgingCases()
    try {
      for (const c of hedging.cases) await c.run(3)
    } finally {
      await hedging.close()
    }
  })

  it("verdicts: ratios at most the limit pass; a missing figure is NOT MEASURED", () => {
    const results: Array<GroupResult> = [
      timed("retry", { "effect-retry": 1000, "retry-budget": 1200 }),
      // The TCP rows (bare, hedged) are for information: no verdict reads them.
      timed("hedging", { bare: 100, hedged: 900, "http-bare": 100, "http-forked": 137, "http-hedged": 150 })
    ]
    assert.deepStrictEqual(
      verdicts(results).map((v) => [v.measured, v.pass]),
      [
        ["1.20x", true],
        ["1.09x", true],
        ["1.50x", true]
      ]
    )
    const over: Array<GroupResult> = [
      timed("hedging", { "http-bare": 100, "http-forked": 136, "http-hedged": 151 }),
      timed("retry", { "effect-retry": 1000, "retry-budget": 1201 })
    ]
    assert.deepStrictEqual(
      verdicts(over).map((v) => v.pass),
      [false, false, false]
    )
    assert.isTrue(verdicts([]).every((v) => v.pass === undefined && v.measured === "not measured"))
  })
})
