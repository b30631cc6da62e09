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
      timed("hedging", { bare: 100, hedged: 151, "http-bare": 100, "http-hedged": 150 })
    ]
    assert.deepStrictEqual(
      verdicts(results).map((v) => v.pass),
      [true, false, true]
    )
    assert.isTrue(verdicts([]).every((v) => v.pass === undefined && v.measured === "not measured"))
  })
})
