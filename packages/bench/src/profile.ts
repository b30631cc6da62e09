/**
 * Profiles one row of a timed group with the V8 sampling profiler, for the timed calls only
 * (module loading and the warm-up are left out):
 *
 *   node --import ./loader/register.mjs src/profile.ts <in-fiber|rejection> <row id> [calls] [out]
 *
 * e.g. `... src/profile.ts in-fiber circuitry-consecutive 1000000 /tmp/closed.cpuprofile`; open the
 * file in Chrome DevTools (Performance) or any .cpuprofile viewer.
 */
import * as Effect from "effect/Effect"
import { writeFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { closedCases } from "./groups/closed.js"
import { rejectionCases } from "./groups/rejection.js"

const [group = "in-fiber", id = "circuitry-consecutive", calls = "1000000", out = `${id}.cpuprofile`] =
  process.argv.slice(2)
const cases =
  group === "rejection"
    ? await rejectionCases(Effect.succeed(1), () => Promise.resolve(1))
    : await closedCases(group === "per-call" ? "per-call" : "in-fiber")
const row = cases.find((c) => c.id === id)
if (row === undefined) {
  process.stderr.write(`no row "${id}" in ${group}; rows: ${cases.map((c) => c.id).join(", ")}\n`)
  process.exit(2)
}
await row.run(100_000) // warm-up
const session = new Session()
session.connect()
await session.post("Profiler.enable")
await session.post("Profiler.setSamplingInterval", { interval: 50 })
await session.post("Profiler.start")
const start = performance.now()
await row.run(Number(calls))
const millis = performance.now() - start
const { profile } = await session.post("Profiler.stop")
writeFileSync(out, JSON.stringify(profile))
process.stdout.write(`${id}: ${((millis * 1e6) / Number(calls)).toFixed(0)} ns/call; profile in ${out}\n`)
process.exit(0)
