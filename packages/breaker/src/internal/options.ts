/**
 * A breaker's options, checked once, at construction, into what the breaker runs on (`Resolved`),
 * or into the one options error, `InvalidBreakerOptions`, whose message names the option and its rule.
 * Options may come from a JSON config, so nothing here trusts their types.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Runtime from "#runtime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"
import type * as CB from "../CircuitBreaker.js"
import { InvalidBreakerOptions } from "./errors.js"
import type * as Machine from "./machine.js"
import * as Policy from "./policy.js"
import * as Rules from "./rules.js"

/** @internal */
export interface Resolved {
  readonly name: string
  readonly policy: Policy.Resolved
  readonly openFor:
    | { readonly _tag: "Fixed"; readonly millis: number }
    | { readonly _tag: "Schedule"; readonly schedule: Schedule.Schedule<unknown, unknown> }
  readonly permits: number
  readonly successesToClose: number
  readonly probeLeaseMillis: number
  /** undefined: the open time of the episode that ended (at least MIN_PROBE_TIMEOUT). */
  readonly probeTimeoutMillis: number | undefined
  readonly timeoutMillis: number | undefined
  readonly isFailure: (cause: Cause.Cause<unknown>) => boolean
  /** With a shared store: how the fleet opens (quorum.ts); undefined: one member's trip opens it. */
  readonly quorum: Quorum | undefined
}

/** @internal */
export interface Quorum {
  /** Members that must trip within the window: a count, or a share of the live members. */
  readonly size:
    { readonly _tag: "Count"; readonly count: number } | { readonly _tag: "Fraction"; readonly fraction: number }
  readonly windowMillis: number
}

/** The default `sharing.quorumWindow`. */
const QUORUM_WINDOW = "1 minute"

const defaultIsFailure = (cause: Cause.Cause<unknown>): boolean => !Edition.hasInterruptsOnly(cause)

/** @internal */
export const resolve = (options: CB.TimeoutOptions | undefined): Edition.Result<Resolved, InvalidBreakerOptions> => {
  if (options !== undefined && !Rules.isRecord(options)) {
    return fail(`options must be an object, got ${Rules.show(options)}`)
  }
  const o: Readonly<Record<string, unknown>> = options ?? {}
  const name = Rules.check("name", Rules.nonEmptyString, o["name"] ?? "default")
  if (Edition.Result.isFailure(name)) return fail(Edition.Result.failureOf(name))
  const resolved = resolveFields(o, Edition.Result.successOf(name))
  return Edition.Result.isFailure(resolved)
    ? fail(`${Edition.Result.failureOf(resolved)} (breaker "${Edition.Result.successOf(name)}")`)
    : Edition.Result.succeed(Edition.Result.successOf(resolved))
}

/**
 * Options but the name, resolved, or the first rule they break in words (`"openFor must be ..."`),
 * for the caller to place: a breaker names itself, a JSON config names the field.
 *
 * @internal
 */
export const resolveFields = (o: Readonly<Record<string, unknown>>, name: string): Edition.Result<Resolved, string> =>
  Edition.Result.gen(function* () {
    const policy = yield* Policy.resolve(o["policy"] ?? Policy.consecutiveFailures(5))
    const openFor = yield* resolveOpenFor(o["openFor"] ?? "30 seconds")
    const halfOpen = o["halfOpen"] === undefined ? {} : o["halfOpen"]
    if (!Rules.isRecord(halfOpen))
      return yield* Edition.Result.fail(`halfOpen must be an object, got ${Rules.show(halfOpen)}`)
    const permits = yield* Rules.check("halfOpen.permits", Rules.atLeastOne, halfOpen["permits"] ?? 1)
    const successesToClose = yield* Rules.check(
      "halfOpen.successesToClose",
      Rules.atLeastOne,
      halfOpen["successesToClose"] ?? 1
    )
    const probeLeaseMillis = yield* Rules.check(
      "halfOpen.probeLease",
      Rules.durationAboveZero,
      halfOpen["probeLease"] ?? "60 seconds"
    )
    const probeTimeoutMillis =
      halfOpen["probeTimeout"] === undefined
        ? undefined
        : yield* Rules.check("halfOpen.probeTimeout", Rules.durationAboveZero, halfOpen["probeTimeout"])
    const timeoutMillis =
      o["timeout"] === undefined ? undefined : yield* Rules.check("timeout", Rules.durationAboveZero, o["timeout"])
    const isFailure = o["isFailure"] ?? defaultIsFailure
    if (typeof isFailure !== "function") {
      return yield* Edition.Result.fail(`isFailure must be a function of a Cause, got ${Rules.show(isFailure)}`)
    }
    const quorum = yield* resolveSharing(o["sharing"])
    return {
      name,
      policy,
      openFor,
      permits,
      successesToClose,
      probeLeaseMillis,
      probeTimeoutMillis,
      timeoutMillis,
      isFailure: isFailure as Resolved["isFailure"],
      quorum
    }
  })

const fail = (message: string) => Edition.Result.fail(new InvalidBreakerOptions({ message }))

const resolveOpenFor = (input: unknown): Edition.Result<Resolved["openFor"], string> =>
  Runtime.isSchedule(input)
    ? Edition.Result.succeed({ _tag: "Schedule", schedule: input as Schedule.Schedule<unknown, unknown> })
    : Edition.Result.map(
        Edition.Result.mapError(
          Rules.check("openFor", Rules.durationAtLeastZero, input),
          () => `openFor must be a finite duration >= 0 or a Schedule, got ${Rules.show(input)}`
        ),
        (millis) => ({ _tag: "Fixed", millis })
      )

const QUORUM_RULE = "a whole number >= 1 or { fraction } with 0 < fraction <= 1"

/** `sharing`: a quorum of 1 (the default) is no quorum at all, so that the breaker shares as without one. */
const resolveSharing = (input: unknown): Edition.Result<Quorum | undefined, string> =>
  Edition.Result.gen(function* () {
    if (input === undefined) return undefined
    if (!Rules.isRecord(input)) return yield* Edition.Result.fail(`sharing must be an object, got ${Rules.show(input)}`)
    const windowMillis = yield* Rules.check(
      "sharing.quorumWindow",
      Rules.durationAboveZero,
      input["quorumWindow"] ?? QUORUM_WINDOW
    )
    const given = input["quorum"] ?? 1
    if (Rules.isRecord(given)) {
      const fraction = yield* Rules.check("sharing.quorum.fraction", Rules.ratio, given["fraction"])
      return { size: { _tag: "Fraction", fraction }, windowMillis } as const
    }
    const count = yield* Edition.Result.mapError(
      Rules.check("sharing.quorum", Rules.atLeastOne, given),
      () => `sharing.quorum must be ${QUORUM_RULE}, got ${Rules.show(given)}`
    )
    return count === 1 ? undefined : ({ size: { _tag: "Count", count }, windowMillis } as const)
  })

/** A fixed wait: one object per breaker, no closures. */
class FixedDelays implements Machine.OpenDelays {
  constructor(private readonly millis: number) {}
  next(): number {
    return this.millis
  }
  last(): number {
    return this.millis
  }
  reset(): void {}
}

/**
 * The waits of open episodes. A schedule is stepped once per open episode, synchronously, in the
 * context of the fiber that made the breaker (so `TestClock` and `TestRandom` apply); a schedule
 * that is done keeps its last delay. A schedule that gives no delay at once is an options error.
 *
 * @internal
 */
export const openDelays = (
  resolved: Resolved,
  runner: Runtime.Runner
): Edition.Result<Machine.OpenDelays, InvalidBreakerOptions> => {
  const openFor = resolved.openFor
  if (openFor._tag === "Fixed") return Edition.Result.succeed(new FixedDelays(openFor.millis))
  // A first step on a copy: a schedule that gives no delay at once is refused here.
  const first = Runtime.syncSteps(openFor.schedule, runner).step(0)
  if (first === undefined) {
    return fail(`openFor schedule must give at least one delay, synchronously (breaker "${resolved.name}")`)
  }
  const steps = Runtime.syncSteps(openFor.schedule, runner)
  let last = first
  return Edition.Result.succeed({
    next: (now) => {
      const delay = steps.step(now)
      if (delay !== undefined) last = delay
      return last
    },
    last: () => last,
    reset: steps.reset
  })
}

/**
 * Checks options as `make` would, without making a breaker (nor joining a shared store), and
 * returns them resolved: a registry resolves its defaults and overrides once, not once per breaker.
 * `timeouts` says whether the registry's breakers are typed with `BreakerTimeoutError` (it was made
 * with a timeout); when not, a `timeout` (one a live config gives later) is refused here rather than
 * failing calls with an error their type does not have.
 *
 * @internal
 */
export const validate = (
  options: CB.TimeoutOptions,
  timeouts: boolean
): Effect.Effect<Resolved, InvalidBreakerOptions> =>
  Effect.gen(function* () {
    const resolved = yield* Edition.fromResult(resolve(options))
    if (resolved.timeoutMillis !== undefined && !timeouts) {
      return yield* Edition.fromResult(
        fail(
          `timeout cannot be given to a registry made without one: its breakers are typed without BreakerTimeoutError. Give the registry's defaults or overrides a timeout when it is made (breaker "${resolved.name}")`
        )
      )
    }
    yield* Edition.fromResult(openDelays(resolved, yield* Runtime.runner))
    return resolved
  })

/** Resolved options under another name (the name is checked: it is the only part that changes). @internal */
export const named = (resolved: Resolved, name: string): Edition.Result<Resolved, InvalidBreakerOptions> =>
  Edition.Result.match(Rules.check("name", Rules.nonEmptyString, name), {
    onFailure: fail,
    onSuccess: (name) => Edition.Result.succeed({ ...resolved, name })
  })
