import { type ChildProcess, spawn } from "node:child_process"
import * as net from "node:net"
import { Effect, type Scope } from "effect"
import { Redis } from "ioredis"

/** A redis-server of the test's own, which the test may pause, kill and restart. */
export interface TestServer {
  readonly port: number
  readonly url: string
  readonly pause: Effect.Effect<void>
  readonly resume: Effect.Effect<void>
  readonly kill: Effect.Effect<void>
  readonly restart: Effect.Effect<void>
  /** A field of INFO, read on a connection of the test's own (opened once, before anything else). */
  readonly info: (field: string) => Effect.Effect<number>
  /** A plain client for looking at the server behind the store's back. */
  readonly admin: Redis
}

/** The pause between two polls (real time: what is polled runs in it, whatever a test's Clock says). */
const pause = (millis: number): Effect.Effect<void> =>
  Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, millis)))

/**
 * Polls `condition` in real time until it holds, for at most `millis`; returns whether it held.
 * A test waits on an event this way, never for a fixed time (utils/wait.ts: `waitFor` fails with
 * what was awaited).
 */
export const eventually = <E, R>(
  condition: Effect.Effect<boolean, E, R>,
  millis = 5_000,
  every = 10
): Effect.Effect<boolean, E, R> =>
  Effect.gen(function* () {
    const end = performance.now() + millis
    while (performance.now() < end) {
      if (yield* condition) return true
      yield* pause(every)
    }
    return yield* condition
  })

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })

/**
 * Spawns a redis-server on `port` (127.0.0.1, no persistence) with `args` on top, and resolves once
 * it accepts connections, within `startMillis`.
 */
export const launchRedis = (
  port: number,
  args: ReadonlyArray<string> = [],
  startMillis = 5_000
): Promise<ChildProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(
      "redis-server",
      ["--port", String(port), "--bind", "127.0.0.1", ...args, "--save", "", "--appendonly", "no", "--daemonize", "no"],
      { stdio: ["ignore", "pipe", "pipe"] }
    )
    let output = ""
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`redis-server on ${port} did not start: ${output}`))
    }, startMillis)
    child.stdout!.on("data", (chunk: Buffer) => {
      output += chunk.toString()
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer)
        resolve(child)
      }
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`redis-server on ${port} exited with ${code}: ${output}`))
    })
  })

/** Kills a redis-server `launchRedis` started (waking it first if paused); resolves once it exited. */
export const stopRedis = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGCONT") // a paused server must be woken to die
    child.kill("SIGKILL")
  })

/** Starts a redis-server on a free port; it is woken and killed when the scope closes, even on failure. */
export const startServer: Effect.Effect<TestServer, never, Scope.Scope> = Effect.gen(function* () {
  const port = yield* Effect.promise(freePort)
  let child: ChildProcess = yield* Effect.acquireRelease(
    Effect.promise(() => launchRedis(port)),
    (): Effect.Effect<void> => Effect.promise(() => stopRedis(child))
  )
  const admin = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Redis(port, "127.0.0.1", { lazyConnect: true, maxRetriesPerRequest: null })
      client.on("error", () => {})
      await client.connect()
      return client
    }),
    (client) => Effect.sync(() => client.disconnect())
  )
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    admin,
    pause: Effect.sync(() => void child.kill("SIGSTOP")),
    resume: Effect.sync(() => void child.kill("SIGCONT")),
    kill: Effect.promise(() => stopRedis(child)),
    restart: Effect.promise(async () => {
      await stopRedis(child)
      child = await launchRedis(port)
    }),
    info: (field) =>
      Effect.promise(async () => {
        const text = await admin.info()
        const line = text.split("\r\n").find((l) => l.startsWith(field + ":"))
        if (line === undefined) throw new Error(`INFO has no field ${field}`)
        return Number(line.slice(field.length + 1))
      })
  }
})

/** A prefix no other test uses. */
export const uniquePrefix = (tag: string): string =>
  `test:${tag}:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`

/** Deletes every key under `prefix` (SCAN, never KEYS). */
export const cleanup = (client: Redis, prefix: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const stream = client.scanStream({ match: prefix + "*", count: 1000 })
    const pending: Array<Promise<unknown>> = []
    stream.on("data", (keys: Array<string>) => {
      if (keys.length > 0) pending.push(client.del(...keys))
    })
    stream.on("end", () => Promise.all(pending).then(() => resolve(), reject))
    stream.on("error", reject)
  })
