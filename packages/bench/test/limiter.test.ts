import { describe, expect, it } from "@effect/vitest"
import * as limiter from "../src/groups/limiter.js"
import type { GroupResult } from "../src/protocol.js"
import { timed } from "./utils.js"

describe("limiter group", () => {
  it("verdicts: admitted calls at most 1.10x the timed floor, rejections at most 1.2x the floor, at most 1 KB per limiter", () => {
    const results: Array<GroupResult> = [
      timed("limiter", { floor: 50, "floor-timed": 100, "limiter-fixed": 110, "limiter-gradient2": 111 }),
      timed("limiter-rejection", { floor: 100, "limiter-fixed": 119, "limiter-gradient2": 200 }),
      {
        _tag: "Memory",
        group: "memory:limiter-gradient2",
        notes: [],
        rows: [
          { id: "limiter-gradient2", label: "", bytesPerBreaker: 1001, samples: [1001], breakers: 1, createMillis: 0 }
        ]
      }
    ]
    expect(limiter.verdicts(results).map((v) => [v.measured, v.pass])).toEqual([
      ["1.10x", true],
      ["1.19x", true],
      ["1.11x", false],
      ["2.00x", false],
      ["1001 B", false]
    ])
    expect(limiter.verdicts([]).every((v) => v.pass === undefined)).toBe(true)
  })

  it("the groups run at a small scale: admitted calls run the work, rejections never do", async () => {
    process.env["BENCH_SCALE"] = "0.01"
    process.env["BENCH_REPEATS"] = "1"
    try {
      const admitted = await limiter.admitted()
      expect(admitted.rows.map((r) => r.id)).toEqual([
        "floor",
        "floor-timed",
        "limiter-fixed",
        "limiter-gradient2",
        "circuitry-consecutive"
      ])
      const rejected = await limiter.rejected() // throws if the work ran
      expect(rejected.rows.every((r) => r.nsPerCall > 0)).toBe(true)
    } finally {
      delete process.env["BENCH_SCALE"]
      delete process.env["BENCH_REPEATS"]
    }
  })
})
