import { Clock, Effect } from "effect"

/** A dependency that fails with the number of the attempt (1, 2, ...) and records when it ran. */
export const numbered = (succeedOn = Number.POSITIVE_INFINITY) => {
  const at: Array<number> = []
  const effect = Effect.flatMap(Clock.currentTimeMillis, (now) => {
    at.push(now)
    return at.length >= succeedOn ? Effect.succeed("ok" as const) : Effect.fail(at.length)
  })
  return { at, effect }
}
