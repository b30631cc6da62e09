/**
 * Reading what `result` (from `@circuitry/testkit`) gives, the same on both Effect majors: `Either`
 * on Effect 3 has `left`/`right`, `Result` on 4 has `failure`/`success`.
 */
import { Result } from "@circuitry/testkit"
import { Option } from "effect"

/** The error of a failed outcome, or undefined when it succeeded. */
export const failureOf = <A, E>(outcome: Result<A, E>): E | undefined =>
  Option.getOrUndefined(Result.getFailure(outcome))

/** The value of a successful outcome, or undefined when it failed. */
export const successOf = <A, E>(outcome: Result<A, E>): A | undefined =>
  Option.getOrUndefined(Result.getSuccess(outcome))
