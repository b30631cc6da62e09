/** A limiter's options, validated once into `Resolved`, and the default `isDrop`. */
import * as Edition from "@circuitry/core/Edition"
import { millis, show } from "@circuitry/core/OptionRules"
import { isRejection } from "@circuitry/core/Rejection"
import type * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Limit from "../Limit.js"
import type * as L from "../Limiter.js"
import { InvalidLimiterOptions } from "./errors.js"
import { isBetween, isWhole } from "./validation.js"

/** @internal */
export interface Resolved {
  readonly name: string
  readonly limit: Limit.Limit
  readonly queueSize: number
  readonly queueTimeoutMillis: number
  readonly partitions: ReadonlyArray<readonly [string, number]>
  readonly isDrop: (cause: Cause.Cause<unknown>) => boolean
}

/** A TimeoutException, or an error caused by one (an HTTP client's RequestError "Transport"). */
const isTimeout = (u: unknown): boolean =>
  Edition.isTimeoutError(u) ||
  (typeof u === "object" && u !== null && Edition.isTimeoutError((u as { readonly cause?: unknown }).cause))

/** @internal */
export const defaultIsDrop = (cause: Cause.Cause<unknown>): boolean => {
  for (const error of Edition.failures(cause)) if (isTimeout(error) || isRejection(error)) return true
  for (const defect of Edition.defects(cause)) if (isTimeout(defect)) return true
  return false
}

/** The most callers one queue may hold: a bigger queue is a memory leak waiting for an outage. */
const MAX_QUEUE = 1_000_000

/**
 * Validates options once, at construction, into a typed error that names the option and its rule.
 *
 * @internal
 */
export const resolve = (options: L.Options | undefined): Effect.Effect<Resolved, InvalidLimiterOptions> => {
  const fail = (message: string) => Effect.fail(new InvalidLimiterOptions({ message }))
  if (options !== undefined && (typeof options !== "object" || options === null)) {
    return fail(`options must be an object, got ${typeof options}`)
  }
  const o = options ?? {}
  const name = o.name ?? "default"
  if (typeof name !== "string" || name.length === 0) {
    return fail(`name must be a non-empty string, got ${show(name)}`)
  }
  const at = ` (limiter "${name}")`
  const limit = o.limit ?? Limit.gradient2()
  if (!Limit.isLimit(limit)) return fail(`limit must be made by Limit.fixed, aimd, gradient2 or vegas${at}`)
  if (limit.problem !== undefined) return fail(`${limit.problem}${at}`)
  if (o.queue !== undefined && (typeof o.queue !== "object" || o.queue === null)) {
    return fail(`queue must be an object${at}`)
  }
  const queueSize = o.queue?.size ?? 0
  if (!isWhole(queueSize, 0) || queueSize > MAX_QUEUE) {
    return fail(`queue.size must be a whole number between 0 and ${MAX_QUEUE}, got ${show(queueSize)}${at}`)
  }
  const queueTimeoutMillis = millis(o.queue?.timeout ?? "1 second")
  if (queueTimeoutMillis === undefined) {
    return fail(`queue.timeout must be a finite duration >= 0, got ${show(o.queue?.timeout)}${at}`)
  }
  if (o.partitions !== undefined && (typeof o.partitions !== "object" || o.partitions === null)) {
    return fail(`partitions must be an object of shares by name${at}`)
  }
  const partitions = Object.entries(o.partitions ?? {})
  let total = 0
  for (const [partition, share] of partitions) {
    if (!isBetween(share, 0, 1, true)) {
      return fail(`partitions.${partition} must be a share with 0 < share <= 1, got ${show(share)}${at}`)
    }
    total += share
  }
  if (total > 1 + 1e-9) return fail(`partitions' shares must add up to at most 1, got ${total}${at}`)
  const isDrop = o.isDrop ?? defaultIsDrop
  if (typeof isDrop !== "function") return fail(`isDrop must be a function of a Cause, got ${typeof isDrop}${at}`)
  return Effect.succeed({ name, limit, queueSize, queueTimeoutMillis, partitions, isDrop })
}
