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
  out.push(...speedVerdicts(results))
  return out
}

/** The speed and memory issue's goals (issue 13): ratios to a baseline in the same run. */
export const SPEED = {
  /** closed call / floor guard, in-fiber, every policy */
  floorRatio: 1.0,
  /** open rejection / the floor guard's rejection */
  rejectionRatio: 1.1,
  /** one transition, ns */
  transitionNs: 1000,
  /** a breaker's first call, beyond a warm closed call, ns */
  firstCallExtraNs: 1000,
  /** making a breaker (a registry miss that also evicts; CircuitBreaker.make), ns */
  makeNs: 5000,
  /** registry.get on a hit / a plain Map lookup */
  getRatio: 1.3,
  /** bytes per breaker after one call, 100,000 in a registry */
  usedBytes: 700,
  /** heap kept per name fed to a registry bounded at 1000 (100,000 names) */
  churnBytesPerName: 16
} as const

export const SPEED_POLICIES = [...POLICIES, ["circuitry-time", "failureRate(timeWindow(10 s))"]] as const

const speedVerdicts = (results: ReadonlyArray<GroupResult>): ReadonlyArray<Verdict> => {
  const inFiber = timed(results, "in-fiber")
  const rejection = timed(results, "rejection")
  const registry = timed(results, "registry")
  const out: Array<Verdict> = []
  for (const [id, policy] of SPEED_POLICIES) {
    out.push(
      verdict(
        `closed call, ${policy}: <= ${SPEED.floorRatio.toFixed(2)}x the floor guard (in-fiber)`,
        ratioOf(inFiber, id, "floor"),
        SPEED.floorRatio,
        times
      )
    )
  }
  for (const [id, policy] of SPEED_POLICIES) {
    out.push(
      verdict(
        `open rejection, ${policy}: <= ${SPEED.rejectionRatio.toFixed(2)}x the floor guard's rejection`,
        ratioOf(rejection, id, "floor"),
        SPEED.rejectionRatio,
        times
      )
    )
  }
  const transition = ns(registry, "transition")
  out.push(
    verdict(
      "a transition (isolate then reset, halved): <= 1 us",
      transition === undefined ? undefined : transition / 2,
      SPEED.transitionNs,
      nanos
    )
  )
  const make = ns(registry, "registry-make")
  const makeCall = ns(registry, "registry-make-call")
  const warm = ns(registry, "closed-call")
  out.push(
    verdict(
      "a breaker's first call, beyond a warm closed call: <= 1 us",
      make === undefined || makeCall === undefined || warm === undefined ? undefined : makeCall - make - warm,
      SPEED.firstCallExtraNs,
      nanos
    ),
    verdict("making a breaker, registry.get on a miss (evicting one): <= 5 us", make, SPEED.makeNs, nanos),
    verdict("making a breaker, CircuitBreaker.make: <= 5 us", ns(registry, "make"), SPEED.makeNs, nanos),
    verdict(
      `registry.get on a hit: <= ${SPEED.getRatio}x a plain Map lookup`,
      ratioOf(registry, "registry-get", "map-get"),
      SPEED.getRatio,
      times
    )
  )
  for (const [id, policy] of POLICIES) {
    out.push(
      verdict(
        `memory per used breaker (one call), ${policy}, 100,000 in a registry: <= ${SPEED.usedBytes} B`,
        bytes(results, `${id}-used`),
        SPEED.usedBytes,
        (n) => `${Math.round(n)} B`
      )
    )
  }
  out.push(
    verdict(
      `memory under churn: 100,000 names through maxBreakers 1000, heap kept per name fed: <= ${SPEED.churnBytesPerName} B`,
      bytes(results, "circuitry-churn"),
      SPEED.churnBytesPerName,
      (n) => `${n.toFixed(1)} B`
    )
  )
  return out
}
