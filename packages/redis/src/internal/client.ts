import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis"
import type { Target } from "./options.js"

/** A connection of an adapter: to one server, or to a Redis Cluster. @internal */
export type Client = Redis | Cluster

/** What an adapter's connection is for. @internal */
export type Role = "commands" | "subscriber"

/** @internal */
export const DEFAULT_URL = "redis://127.0.0.1:6379"

/**
 * A client that never makes a caller wait for a connection: no offline queue (a command sent
 * while not connected fails at once), and on a lost connection the commands in flight fail
 * instead of being sent again after the reconnect (a late retry could land after the caller has
 * moved on). Reconnects in the background with a capped backoff.
 *
 * @internal
 */
export const failFastOptions: RedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  connectTimeout: 2_000,
  retryStrategy: (times) => Math.min(50 * times, 1_000)
}

/**
 * A subscriber connection: its SUBSCRIBE waits in the offline queue until the server is there,
 * and is made again by ioredis after every reconnect.
 *
 * @internal
 */
export const subscriberOptions: RedisOptions = {
  lazyConnect: true,
  enableOfflineQueue: true,
  maxRetriesPerRequest: null,
  autoResubscribe: true,
  connectTimeout: 2_000,
  retryStrategy: (times) => Math.min(50 * times, 1_000)
}

/** How often a subscriber on a cluster reads the slot map (`CLUSTER SLOTS`). */
const SUBSCRIBER_SLOTS_REFRESH_MILLIS = 1_000

const clusterOptions = (options: RedisOptions, role: Role): ClusterOptions => ({
  lazyConnect: true,
  enableOfflineQueue: options.enableOfflineQueue ?? true,
  clusterRetryStrategy: (times) => Math.min(50 * times, 1_000),
  // A command connection reads the slot map again when a reply says it moved or a node is lost.
  // A subscriber sends no command that would tell it: it reads the map every second, so that a
  // node lost to a failover leaves its map (a resync of every member, see `onReady`) within
  // about a second of the failover.
  ...(role === "subscriber" ? { slotsRefreshInterval: SUBSCRIBER_SLOTS_REFRESH_MILLIS } : {}),
  // Each node connection: the node-level rules of ioredis (offline queue on, no reconnect of a
  // lost node), with the connect timeout and no resend of in-flight commands.
  redisOptions: {
    connectTimeout: options.connectTimeout ?? 2_000,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: options.maxRetriesPerRequest ?? null
  }
})

/** Where each adapter's connection goes, and why it last failed to connect: what its errors say. */
const followed = new WeakMap<Client, { readonly where: string; lastError?: unknown }>()

/** Notes where `client` goes, and each connection error it meets until it is ready again. */
const follow = (client: Client, where: string): void => {
  const seen: { readonly where: string; lastError?: unknown } = { where }
  followed.set(client, seen)
  client.on("error", (e: unknown) => {
    seen.lastError = e
  })
  client.on("ready", () => {
    delete seen.lastError
  })
}

/** A connection error in our words. */
const reasonOf = (e: unknown): string => {
  switch (typeof e === "object" && e !== null && "code" in e ? e.code : undefined) {
    case "ECONNREFUSED":
      return "connection refused"
    case "ECONNRESET":
      return "connection reset"
    case "ETIMEDOUT":
      return "connect timed out"
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host not found"
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "host unreachable"
  }
  return messageOf(e)
}

/**
 * Why a command on `client` failed, in our words, with the address: ioredis says "Stream isn't
 * writeable and enableOfflineQueue options is false" for a command it did not send because it is
 * not connected, and "Connection is closed." whatever closed it.
 *
 * @internal
 */
export const failureOf = (client: Client, e: unknown): string => {
  const seen = followed.get(client)
  const where = seen?.where ?? "Redis"
  const why = seen !== undefined && "lastError" in seen ? `: ${reasonOf(seen.lastError)}` : ""
  const message = messageOf(e)
  if (message.startsWith("Stream isn't writeable")) return `not connected to ${where}${why} (the command was not sent)`
  if (message === "Connection is closed.") return `the connection to ${where} closed${why}`
  return message
}

/** Why `client` could not connect, in our words (the connection error it met, if any). @internal */
export const connectFailureOf = (client: Client, e: unknown): string => {
  const seen = followed.get(client)
  return seen !== undefined && "lastError" in seen ? reasonOf(seen.lastError) : messageOf(e)
}

/** @internal */
export const makeClient = (url: string, options: RedisOptions): Redis => {
  const client = new Redis(url, options)
  // Errors are seen by the calls that meet them; an unheard "error" event would only be logged.
  client.on("error", () => {})
  return client
}

/** @internal */
export const makeCluster = (
  nodes: ReadonlyArray<string | { host: string; port: number }>,
  options: RedisOptions,
  role: Role
): Cluster => {
  const cluster = new Cluster([...nodes], clusterOptions(options, role))
  cluster.on("error", () => {})
  cluster.on("node error", () => {})
  return cluster
}

/**
 * A connection to `target` with the rules of `options` (`failFastOptions` or
 * `subscriberOptions`), closed with the scope when it is the adapter's own. A `Cluster` the
 * application gave is used as it is for commands and left open; a subscriber is always the
 * adapter's own (a duplicate of it).
 *
 * @internal
 */
export const acquire = (
  target: Target,
  options: RedisOptions,
  role: Role
): Effect.Effect<Client, never, Scope.Scope> => {
  if (target._tag === "Cluster" && role === "commands") return Effect.succeed(target.cluster)
  return Effect.acquireRelease(
    Effect.sync((): Client => {
      const client = make(target, options, role)
      follow(client, describe(target))
      return client
    }),
    (client) => Effect.sync(() => client.disconnect())
  )
}

const make = (target: Target, options: RedisOptions, role: Role): Client => {
  switch (target._tag) {
    case "Server":
      return makeClient(target.url, options)
    case "Nodes":
      return makeCluster(target.nodes, options, role)
    case "Cluster": {
      // The application's options (nodes, auth, TLS), with the subscriber's own rules on top.
      const duplicate = target.cluster.duplicate(undefined, {
        lazyConnect: true,
        enableOfflineQueue: true,
        slotsRefreshInterval: SUBSCRIBER_SLOTS_REFRESH_MILLIS
      })
      duplicate.on("error", () => {})
      return duplicate
    }
  }
}

/**
 * Connects an adapter's connection, unless it is connected or connecting already (a `Cluster`
 * the application gave).
 *
 * @internal
 */
export const connect = (client: Client): Promise<void> =>
  client.status === "wait" ? client.connect() : Promise.resolve()

/** What the adapter's warnings call where Redis is. @internal */
export const describe = (target: Target): string =>
  target._tag === "Server"
    ? target.url
    : target._tag === "Nodes"
      ? `the Redis Cluster at ${target.nodes.map((n) => (typeof n === "string" ? n : `${n.host}:${n.port}`)).join(", ")}`
      : "the given Redis Cluster"

/**
 * Waits for `promise` at most `millis` of real time. Used only where real network I/O is awaited
 * outside any caller's deadline (startup), so that a test's TestClock cannot make it hang.
 *
 * @internal
 */
export const within = <A>(promise: Promise<A>, millis: number): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${millis} ms`)), millis)
    promise.then(
      (a) => {
        clearTimeout(timer)
        resolve(a)
      },
      (e) => {
        clearTimeout(timer)
        reject(e)
      }
    )
  })

/** @internal */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e))
