/**
 * What differs between the Effect majors for test code that runs outside vitest too (a fixture a
 * test starts in a child process): these names, unlike testkit.effect3.ts, load no @effect/vitest,
 * which throws when it is imported outside a vitest run. The testkit re-exports them.
 * fixture.effect4.ts has the same names.
 */
import type * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"

/** A subscription to a PubSub (a `Queue.Dequeue` on Effect 3, a `PubSub.Subscription` on 4). */
export type Subscription<A> = Queue.Dequeue<A>

/** The next value of a subscription, waiting for it. */
export const take = <A>(subscription: Subscription<A>): Effect.Effect<A> => Queue.take(subscription)
