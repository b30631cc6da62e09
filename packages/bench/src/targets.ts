/**
 * The breaker's targets (from the breaker issue) and their verdicts, computed from one run.
 */
import type { GroupResult, MemoryGroup, TimedGroup } from "./protocol.js"
import { pairedRatio } from "./stats.js"

export interface Verdict {
  readonly target: string
  readonly measured: string
  /** undefined when a figure the target needs is missing from the run. */
  readonly pass: boolean | undefined
}

export const LIMITS = {
  /** closed call / floor guard, in-fiber */
  floorRatio: 1.5,
  /** closed call / cockatiel bridged, in-fiber */
  bridgeRatio: 0.25,
  /** open rejection, ns */
  rejectionNs: 1000,
  /** bytes per breaker in a registry of 100,000 */
  bytesPerBreaker: 1000
} as const

const timed = (results: ReadonlyArray<GroupResult>, group: string): TimedGroup | undefined =>
  results.find((r): r is TimedGroup => r._tag === "Timed" && r.group === group)

const ns = (group: TimedGroup | undefined, id: string): number | undefined =>
  group?.rows.find((r) => r.id === id)?.nsPerCall

/** Paired by repeat (see `pairedRatio`). */
const ratioOf = (group: TimedGroup | undefined, id: string, to: string): number | undefined => {
  const a = group?.rows.find((r) => r.id === id)
  const b = group?.rows.find((r) => r.id === to)
  return a === undefined || b === undefined ? undefined : pairedRatio(a.samples, b.samples)
}

const bytes = (results: ReadonlyArray<GroupResult>, id: string): number | undefined =>
  results
    .filter((r): r is MemoryGroup => r._tag === "Memory")
    .flatMap((r) => r.rows)
    .find((r) => r.id === id)?.bytesPerBreaker

/** `strict`: the figure must be under the limit ("under 1 us"); otherwise at most the limit ("at most 1.5x"). */
const verdict = (
  target: string,
  value: number | undefined,
  limit: number,
  show: (n: number) => string,
  strict = false
): Verdict => ({
  target,
  measured: value === undefined ? "not measured" : show(value),
  pass: value === undefined ? undefined : strict ? value < limit : value <= limit
})

const times = (n: number) => `${n.toFixed(2)}x`
const nanos = (n: number) => `${Math.round(n)} ns`

export const POLICIES = [
  ["circuitry-consecutive", "consecutiveFailures(5)"],
  ["circuitry-rate", "failureRate(countWindow(100))"]
] as const

export const verdicts = (results: ReadonlyArray<GroupResult>): ReadonlyArray<Verdict> => {
  const inFiber = timed(results, "in-fiber")
  const rejection = timed(results, "rejection")
  const out: Array<Verdict> = []
  for (const [id, policy] of POLICIES) {
    out.push(
      verdict(
        `closed call, ${policy}: <= ${LIMITS.floorRatio}x the floor guard (in-fiber)`,
        ratioOf(inFiber, id, "floor"),
        LIMITS.floorRatio,
        times
      ),
      verdict(
        `closed call, ${policy}: <= ${LIMITS.bridgeRatio}x cockatiel ConsecutiveBreaker bridged (in-fiber)`,
        ratioOf(inFiber, id, "cockatiel-consecutive-bridged"),
        LIMITS.bridgeRatio,
        times
      )
    )
  }
  for (const [id, policy] of POLICIES) {
    out.push(verdict(`open rejection, ${policy}: < 1 us`, ns(rejection, id), LIMITS.rejectionNs, nanos, true))
  }
  for (const [id, policy] of POLICIES) {
    out.push(
      verdict(
        `memory per breaker, ${policy}, 100,000 in a registry: < 1 KB (1000 B)`,
        bytes(results, id),
        LIMITS.bytesPerBreaker,
        (n) => `${Math.round(n)} B`,
        true
      )
    )
  }
  return out
}
