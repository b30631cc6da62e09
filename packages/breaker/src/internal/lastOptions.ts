/**
 * `CircuitBreaker.make` remembers the last options it resolved: an application that makes a
 * breaker per tenant or host on the request path passes the same options under another name
 * each time, and resolving them costs more than making the breaker (about 2 µs: an `Edition.Result.gen`
 * and the rules).
 *
 * Options are the same when their entries but the name are the same, in the same order, and
 * every value is one that cannot change under us: a primitive, a function, a policy, a schedule
 * or a duration, compared by identity; a plain object (as `halfOpen`) is compared by its entries,
 * one level down. Options with any other value are never remembered, so a mutable value (or an
 * option added later that takes an object) is always resolved again. What is remembered is a copy
 * of the entries, not the caller's object, which the caller may change. The name is always checked.
 */
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Schedule from "effect/Schedule"
import type * as CB from "../CircuitBreaker.js"
import type { InvalidBreakerOptions } from "./errors.js"
import * as Options from "./options.js"
import { isPolicy } from "./policy.js"

type Entries = Array<unknown>

/** What stands for a plain object in the entries (its own entries follow it). */
const OBJECT = Symbol("object")

const isPlain = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && Object.getPrototypeOf(u) === Object.prototype

/** A value that cannot change once made. */
const isFixed = (u: unknown): boolean =>
  (typeof u !== "object" && typeof u !== "function") ||
  u === null ||
  typeof u === "function" ||
  isPolicy(u) ||
  Schedule.isSchedule(u) ||
  Duration.isDuration(u)

/** The options' entries but the name, flattened as key, value, ...; undefined when one is not fixed. */
const entriesOf = (options: Readonly<Record<string, unknown>>, into: Entries, depth: number): Entries | undefined => {
  for (const key in options) {
    if (!Object.hasOwn(options, key) || (depth === 0 && key === "name")) continue
    const value = options[key]
    into.push(key)
    if (isFixed(value)) into.push(value)
    else if (depth === 0 && isPlain(value)) {
      into.push(OBJECT)
      if (entriesOf(value, into, 1) === undefined) return undefined
      into.push(OBJECT)
    } else return undefined
  }
  return into
}

let lastEntries: Entries | undefined
let lastResolved: Options.Resolved | undefined

const sameAsLast = (entries: Entries): boolean =>
  lastEntries !== undefined && entries.length === lastEntries.length && entries.every((e, i) => e === lastEntries![i])

/** `Options.resolve`, taken from memory when the options are the last ones under another name. */
export const resolve = (
  options: CB.TimeoutOptions | undefined
): Edition.Result<Options.Resolved, InvalidBreakerOptions> => {
  const entries = isPlain(options) ? entriesOf(options, [], 0) : undefined
  if (entries !== undefined && sameAsLast(entries)) {
    return Options.named(lastResolved!, (options!.name ?? "default") as string)
  }
  const resolved = Options.resolve(options)
  if (entries !== undefined && Edition.Result.isSuccess(resolved)) {
    lastEntries = entries
    lastResolved = Edition.Result.successOf(resolved)
  }
  return resolved
}
