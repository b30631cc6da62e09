/**
 * Policies as values, and their resolution into trackers.
 *
 * A constructor only records what it was given (so it never throws, whatever a JSON config holds);
 * `resolve` checks it, once, when a breaker is made, and returns what the breaker needs: whether
 * outcomes need call times, and a factory of empty trackers. Neither is part of the public `Policy`.
 */
import * as Edition from "@circuitry/core/Edition"
import type * as Policy from "../Policy.js"
import * as Rules from "./rules.js"
import * as Tracker from "./tracker.js"

/** @internal */
export const TypeId: Policy.TypeId = Symbol.for("@circuitry/breaker/Policy") as Policy.TypeId

/** Where a policy keeps what its constructor was given (not in the public interface). */
const InputId: unique symbol = Symbol.for("@circuitry/breaker/Policy/input")

type Input =
  | { readonly _tag: "ConsecutiveFailures"; readonly threshold: unknown }
  | { readonly _tag: "FailureRate"; readonly options: unknown }

interface PolicyImpl extends Policy.Policy {
  readonly [InputId]: Input
  /** Its resolution, once made: every breaker of a registry shares one policy value, and one resolution. */
  [ResolvedId]?: Edition.Result<Resolved, string>
}

/** Where a policy keeps its resolution. */
const ResolvedId: unique symbol = Symbol.for("@circuitry/breaker/Policy/resolved")

const make = (input: Input, description: string): Policy.Policy => {
  const policy: PolicyImpl = { [TypeId]: TypeId, _tag: input._tag, description, [InputId]: input }
  return policy
}

/** @internal */
export const isPolicy = (u: unknown): u is Policy.Policy => typeof u === "object" && u !== null && TypeId in u

/** @internal */
export const consecutiveFailures = (threshold: number): Policy.Policy =>
  make({ _tag: "ConsecutiveFailures", threshold }, `consecutiveFailures(${Rules.show(threshold)})`)

/** @internal */
export const failureRate = (options: unknown): Policy.Policy => {
  const o = Rules.isRecord(options) ? options : {}
  const window = Rules.isRecord(o["window"]) ? o["window"] : undefined
  const windowText =
    window?.["_tag"] === "CountWindow"
      ? `countWindow(${Rules.show(window["size"])})`
      : window?.["_tag"] === "TimeWindow"
        ? `timeWindow(${Rules.show(Rules.millis(window["duration"]) ?? window["duration"])}ms)`
        : "?"
  const minimumCalls = o["minimumCalls"] === undefined ? "" : `, minimumCalls ${Rules.show(o["minimumCalls"])}`
  return make(
    { _tag: "FailureRate", options },
    `failureRate(${Rules.show(o["threshold"])}, ${windowText}${minimumCalls})`
  )
}

/** What a breaker needs from its policy. @internal */
export interface Resolved {
  /** Whether outcomes need the call's start and end times (time windows, slow calls). */
  readonly timed: boolean
  /** The slow-call rule's duration, if the policy has one (half-open probes are judged by it too). */
  readonly slowMillis: number | undefined
  /** A fresh, empty tracker. */
  readonly makeTracker: () => Tracker.Tracker
}

/** Checks a policy, once: what the breaker needs from it, or the first rule it breaks. @internal */
export const resolve = (policy: unknown): Edition.Result<Resolved, string> => {
  if (!isPolicy(policy) || !(InputId in policy)) {
    return Edition.Result.fail("policy must be made by Policy.consecutiveFailures or Policy.failureRate")
  }
  const impl = policy as PolicyImpl
  const input = impl[InputId]
  // A policy's input is read once: what it resolved to is what it keeps resolving to.
  return (impl[ResolvedId] ??=
    input._tag === "ConsecutiveFailures" ? resolveConsecutive(input.threshold) : resolveRate(input.options))
}

const resolveConsecutive = (input: unknown): Edition.Result<Resolved, string> =>
  Edition.Result.map(
    Rules.check("policy: consecutiveFailures threshold", Rules.atLeastOne, input),
    (threshold): Resolved => ({
      timed: false,
      slowMillis: undefined,
      makeTracker: () => new Tracker.ConsecutiveFailures(threshold)
    })
  )

const WINDOW_RULE = "Policy.countWindow(size) or Policy.timeWindow(duration)"

type Window =
  { readonly _tag: "CountWindow"; readonly size: number } | { readonly _tag: "TimeWindow"; readonly millis: number }

const resolveWindow = (input: unknown): Edition.Result<Window, string> => {
  if (input === undefined) return Edition.Result.fail(`policy: failureRate window is required: ${WINDOW_RULE}`)
  if (Rules.isRecord(input) && input["_tag"] === "CountWindow") {
    return Edition.Result.map(
      Rules.check("policy: countWindow size", Rules.countWindowSize, input["size"]),
      (size): Window => ({ _tag: "CountWindow", size })
    )
  }
  if (Rules.isRecord(input) && input["_tag"] === "TimeWindow") {
    return Edition.Result.map(
      Rules.check("policy: timeWindow duration", Rules.durationAtLeastOneMilli, input["duration"]),
      (millis): Window => ({ _tag: "TimeWindow", millis })
    )
  }
  return Edition.Result.fail(`policy: failureRate window must be ${WINDOW_RULE}, got ${Rules.show(input)}`)
}

const resolveRate = (input: unknown): Edition.Result<Resolved, string> =>
  Edition.Result.gen(function* () {
    if (!Rules.isRecord(input)) {
      return yield* Edition.Result.fail(`policy: failureRate options must be an object, got ${Rules.show(input)}`)
    }
    const threshold = yield* Rules.check("policy: failureRate threshold", Rules.ratio, input["threshold"])
    const window = yield* resolveWindow(input["window"])
    const minimumCalls = yield* Rules.check(
      "policy: failureRate minimumCalls",
      Rules.atLeastOne,
      input["minimumCalls"] ?? (window._tag === "CountWindow" ? Math.min(10, window.size) : 10)
    )
    if (window._tag === "CountWindow" && minimumCalls > window.size) {
      return yield* Edition.Result.fail(
        `policy: failureRate minimumCalls (${minimumCalls}) must not exceed the count window's size (${window.size}), or the circuit could never open`
      )
    }
    const slowCall = input["slowCall"]
    let slow: { readonly millis: number; readonly threshold: number } | undefined
    if (slowCall !== undefined) {
      if (!Rules.isRecord(slowCall)) {
        return yield* Edition.Result.fail(
          `policy: failureRate slowCall must be an object { duration, threshold }, got ${Rules.show(slowCall)}`
        )
      }
      slow = {
        millis: yield* Rules.check(
          "policy: failureRate slowCall.duration",
          Rules.durationAtLeastZero,
          slowCall["duration"]
        ),
        threshold: yield* Rules.check("policy: failureRate slowCall.threshold", Rules.ratio, slowCall["threshold"])
      }
    }
    const rate: Tracker.RateOptions = {
      threshold,
      minimumCalls,
      slowMillis: slow?.millis,
      slowThreshold: slow?.threshold ?? 1
    }
    return {
      timed: window._tag === "TimeWindow" || slow !== undefined,
      slowMillis: slow?.millis,
      makeTracker: () =>
        window._tag === "CountWindow"
          ? new Tracker.CountWindow(window.size, rate)
          : new Tracker.TimeWindow(window.millis, rate)
    }
  })
