import type { TimedGroup } from "../src/protocol.js"

/** A timed group's result with one row per id, each a single sample of `nsPerCall`, against the row "floor". */
export const timed = (group: string, rows: Record<string, number>): TimedGroup => ({
  _tag: "Timed",
  group,
  floor: "floor",
  notes: [],
  rows: Object.entries(rows).map(([id, nsPerCall]) => ({
    id,
    label: id,
    nsPerCall,
    wallNsPerCall: nsPerCall,
    spread: 0,
    samples: [nsPerCall],
    callsPerSample: 1
  }))
})
