/**
 * The shedding rule: CoDel's target and interval (Nichols & Jacobson), in the form Facebook's
 * servers use for request queues (Maurer, "Fail at Scale", 2015). A queue that has not been empty
 * for a whole `interval` is standing: a request that waited longer than `target` is shed. A queue
 * that was empty less than an `interval` ago is a burst: a request may wait up to `interval`. No
 * request that waited past `interval` is served. Requests are judged in the order they leave the
 * queue, so under a standing queue the oldest (who waited the longest) go first.
 *
 * CoDel drops one packet per `interval / sqrt(count)`, which works because TCP senders slow down
 * when they see a drop. HTTP clients that time out and retry do not, so a standing queue is cut
 * to `target` at once instead of by an increasing rate.
 *
 * Pure: given `now` (milliseconds on the Effect Clock) and the wait; no Effect services.
 */

/** @internal */
export interface Rule {
  /** The longest wait allowed while the queue stands. */
  readonly target: number
  /** How long a queue may stay non-empty before it counts as standing, and the longest wait allowed in a burst. */
  readonly interval: number
}

/** @internal */
export interface State {
  /** The last time the queue was seen empty. */
  readonly lastEmpty: number
}

/** @internal */
export type Verdict = "admit" | "standing" | "overdue"

/**
 * The queue was seen empty at `now` (a new queue is empty when it is made).
 *
 * @internal
 */
export const empty = (now: number): State => ({ lastEmpty: now })

/**
 * Whether the queue has not been empty for a whole interval at `now`.
 *
 * @internal
 */
export const isStanding = (rule: Rule, state: State, now: number): boolean => now - state.lastEmpty >= rule.interval

/**
 * The verdict for a request that waited `waited` milliseconds, leaving the queue at `now`.
 *
 * @internal
 */
export const decide = (rule: Rule, state: State, now: number, waited: number): Verdict => {
  if (waited <= rule.target) return "admit"
  if (waited > rule.interval) return "overdue"
  return isStanding(rule, state, now) ? "standing" : "admit"
}
