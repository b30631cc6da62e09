/**
 * The one way both Redis adapters talk to a connection: every call under the per-call deadline
 * (kept by one sweeper fiber), the liveness watchdog that judges the connection by its silence,
 * and a signal on every `ready` (a first connection or a reconnect) for a store that resyncs.
 * Deadlines and silence are kept on the loop's running clock (deadlines.ts `runningClock`).
 */
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { Cluster } from "ioredis"
import { type Client, failureOf } from "./client.js"
import { Deadlines, runningClock } from "./deadlines.js"

/** @internal */
export class DeadlineExceeded extends Schema.TaggedError<DeadlineExceeded>()("DeadlineExceeded", {
  operation: Schema.String,
  deadlineMillis: Schema.Number
}) {}

/** How an adapter spells a failed call: its own error type, with the cause. @internal */
export type ErrorOf<E> = (operation: string, message: string, cause: unknown) => E

/** @internal */
export interface Connection<E> {
  /**
   * One call: its own deadline, which fails only this caller. The command stays in ioredis's
   * queue when the deadline passes, so its late reply is matched to it (and dropped) and never
   * to the next command on the connection.
   */
  readonly call: <A>(operation: string, send: () => Promise<A>) => Effect.Effect<A, E>
}

/**
 * Follows the connection's progress: while any command is in flight, the time since the last
 * reply (or since the oldest pending command was sent) is the connection's silence.
 */
class Liveness {
  inflight = 0
  lastProgress = 0
  constructor(private readonly now: () => number) {}
  sent(): void {
    if (this.inflight++ === 0) this.lastProgress = this.now()
  }
  settled(): void {
    this.inflight--
    this.lastProgress = this.now()
  }
  silence(): number {
    return this.inflight > 0 ? this.now() - this.lastProgress : 0
  }
}

/**
 * Calls on `client` under `deadlineMillis`, watched for silence past `livenessMillis` (then the
 * connection is torn down, the waiting calls fail and ioredis reconnects in the background).
 * `name` names the adapter in the watchdog's warning.
 *
 * @internal
 */
export const make = <E>(
  client: Client,
  settings: { readonly name: string; readonly deadlineMillis: number; readonly livenessMillis: number },
  errorOf: ErrorOf<E>
): Effect.Effect<Connection<E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const { deadlineMillis, livenessMillis, name } = settings
    // Silence is measured on the loop's running clock: a stall of the process's own is no silence of Redis.
    const clock = yield* runningClock
    const liveness = new Liveness(clock.now)

    // The watchdog: silence past `liveness` means the connection is dead even if TCP says
    // otherwise. Tearing it down fails the callers still waiting (ioredis flushes its queue) and
    // ioredis reconnects in the background.
    const interval = Duration.millis(Math.max(5, Math.floor(livenessMillis / 4)))
    yield* Effect.sleep(interval).pipe(
      Effect.andThen(
        Effect.suspend(() => {
          const silence = liveness.silence()
          if (silence < livenessMillis) return Effect.void
          liveness.lastProgress = clock.now()
          client.disconnect(true)
          return Effect.logWarning(
            `${name}: no reply for ${silence} ms (liveness ${livenessMillis} ms): connection torn down, reconnecting`
          )
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )

    const deadlines = yield* Deadlines.make(deadlineMillis)
    const call = <A>(operation: string, send: () => Promise<A>): Effect.Effect<A, E> =>
      Edition.callback<A, E>((resume) => {
        let promise: Promise<A>
        try {
          promise = send()
        } catch (e) {
          resume(Effect.fail(errorOf(operation, failureOf(client, e), e)))
          return
        }
        let settled = false
        const cancel = deadlines.start(() => {
          if (settled) return
          settled = true
          resume(
            Effect.fail(
              errorOf(
                operation,
                `no reply within the deadline of ${deadlineMillis} ms`,
                new DeadlineExceeded({ operation, deadlineMillis })
              )
            )
          )
        })
        liveness.sent()
        promise.then(
          (a) => {
            liveness.settled()
            if (settled) return // abandoned: the caller has its timeout, the reply goes nowhere
            settled = true
            cancel()
            resume(Effect.succeed(a))
          },
          (e) => {
            liveness.settled()
            if (settled) return
            settled = true
            cancel()
            resume(Effect.fail(errorOf(operation, failureOf(client, e), e)))
          }
        )
        // No canceler: one makes Effect 3's `Effect.async` wrap the call in `onInterrupt`, which cost more
        // CPU than the rest of the call with many in flight. An interrupted call leaves at once all
        // the same; its entry goes with the reply or the deadline, and resuming it then is a no-op.
      })
    return { call }
  })

/** The events `onReady` runs on for `client`. @internal */
export const readyEvents = (client: Client): ReadonlyArray<string> =>
  client instanceof Cluster ? ["ready", "-node"] : ["ready"]

/**
 * Runs `effect` after every `ready` of any of `clients` (a first connection, or a reconnect after
 * which publications may have been missed), one run at a time; readies that come while it runs
 * are folded into one more run. On a cluster, a node leaving (a failover, seen at a slots refresh)
 * counts as a ready too: the subscriber may have been on it, and moved to another node without
 * a `ready` of the cluster.
 *
 * @internal
 */
export const onReady = (
  clients: ReadonlyArray<Client>,
  effect: Effect.Effect<void>
): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function* () {
    const signal = yield* Queue.sliding<void>(1)
    const ready = () => Edition.offerUnsafe(signal, undefined)
    yield* Effect.acquireRelease(
      Effect.sync(() => {
        for (const client of clients) for (const event of readyEvents(client)) client.on(event, ready)
      }),
      () =>
        Effect.sync(() => {
          for (const client of clients) for (const event of readyEvents(client)) client.off(event, ready)
        })
    )
    yield* Queue.take(signal).pipe(Effect.andThen(effect), Effect.forever, Effect.forkScoped)
  })
