/**
 * Waiting on the event a test needs, never for a fixed time: each wait polls (real time, as the
 * network and the server run in it) until what it names has happened, and fails the test with
 * that name once its deadline has passed.
 */
import { Effect, type Scope } from "effect"
import { type Cluster, Redis } from "ioredis"
import { eventually } from "./server.js"

/** How long a wait lasts by default: long enough for a loaded machine, short of a test's timeout. */
export const WAIT_MILLIS = 10_000

/** Waits until `condition` holds; fails the test with `what` (and the deadline) if it does not in `millis`. */
export const waitFor = <E, R>(
  what: string,
  condition: Effect.Effect<boolean, E, R>,
  millis = WAIT_MILLIS
): Effect.Effect<void, E, R> =>
  Effect.flatMap(eventually(condition, millis, 5), (held) =>
    held ? Effect.void : Effect.die(new Error(`waited ${millis} ms for ${what}, in vain`))
  )

/** How many connections the servers of `clients` have subscribed to `channel` (PUBSUB NUMSUB, summed). */
export const subscribers = (clients: ReadonlyArray<Redis>, channel: string): Effect.Effect<number> =>
  Effect.promise(async () => {
    let n = 0
    for (const client of clients) {
      const [, count] = (await client.call("PUBSUB", "NUMSUB", channel)) as [string, number]
      n += Number(count)
    }
    return n
  })

/** Waits until at least `n` connections are subscribed to `channel` (the SUBSCRIBE acknowledged by the server). */
export const subscribed = (clients: ReadonlyArray<Redis>, channel: string, n: number): Effect.Effect<void> =>
  waitFor(
    `${n} subscriber(s) on ${channel} (PUBSUB NUMSUB)`,
    Effect.map(subscribers(clients, channel), (count) => count >= n)
  )

/** Every node of a cluster client, primaries and replicas: a classic subscription lives on one of them. */
export const nodesOf = (cluster: Cluster): ReadonlyArray<Redis> => cluster.nodes("all")

/**
 * Waits until the server's clock (TIME, real time) is past the `until` of the verdict stored at
 * `key`: the fleet's open time is over by the clock that dated it, so the store grants probe leases.
 */
export const openTimeOver = (admin: Redis | Cluster, key: string): Effect.Effect<void> =>
  waitFor(
    `the server's clock to pass the open time stored at ${key}`,
    Effect.promise(async () => {
      const until = Number(await admin.hget(key, "until"))
      const [seconds, micros] = await admin.time()
      return Number.isFinite(until) && Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000) > until
    })
  )

/** A command a server executed, as MONITOR tells it (what scripts call left out). */
export interface Seen {
  readonly name: string
  readonly args: ReadonlyArray<string>
}

/**
 * Records every command the servers of `clients` execute from now on (MONITOR, on a connection
 * of its own per server, closed with the scope), in the order each server executes them.
 */
export const watchCommands = (clients: ReadonlyArray<Redis>): Effect.Effect<ReadonlyArray<Seen>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const seen: Array<Seen> = []
    for (const client of clients) {
      const monitor = yield* Effect.acquireRelease(
        Effect.promise(() => client.monitor()),
        (m) => Effect.sync(() => m.disconnect())
      )
      monitor.on("error", () => {})
      monitor.on("monitor", (_time: string, args: Array<string>, source: string) => {
        if (source !== "lua") seen.push({ name: String(args[0]).toLowerCase(), args: args.slice(1) })
      })
    }
    return seen
  })

/**
 * Bare pub/sub on the server at `url`, to time beside what a test measures: `once` is one
 * publication on a fresh channel, from a connection of its own to a subscriber of its own, heard
 * back (ms). Started at the same moment as the thing measured, it meets the same stalls of a
 * loaded machine: the baseline a propagation bound is stated against.
 */
export const pubSub = (url: string): Effect.Effect<{ readonly once: Effect.Effect<number> }, never, Scope.Scope> =>
  Effect.gen(function* () {
    const connect = Effect.acquireRelease(
      Effect.sync(() => new Redis(url)),
      (client) => Effect.sync(() => client.disconnect())
    )
    const [publisher, subscriber] = [yield* connect, yield* connect]
    const channel = `pubsub-baseline:${process.pid}:${Math.random().toString(36).slice(2)}`
    yield* Effect.promise(() => subscriber.subscribe(channel))
    const once = Effect.promise(
      () =>
        new Promise<number>((resolve) => {
          const start = performance.now()
          subscriber.once("message", () => resolve(performance.now() - start))
          void publisher.publish(channel, "ping")
        })
    )
    return { once }
  })
