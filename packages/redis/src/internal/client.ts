import { Redis, type RedisOptions } from "ioredis"

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

/** @internal */
export const makeClient = (url: string, options: RedisOptions): Redis => {
  const client = new Redis(url, options)
  // Errors are seen by the calls that meet them; an unheard "error" event would only be logged.
  client.on("error", () => {})
  return client
}

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
