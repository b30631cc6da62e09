/**
 * A Redis Cluster of the test's own: `redis-server --cluster-enabled yes` on free ports in a temp
 * dir, joined by `redis-cli --cluster create`, every node killed and the dir removed when the
 * scope closes (even on failure).
 */
import { type ChildProcess, execFile } from "node:child_process"
import * as fs from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Effect, type Scope } from "effect"
import { Cluster, Redis } from "ioredis"
import { launchRedis, stopRedis } from "./server.js"

export interface ClusterNode {
  readonly host: string
  readonly port: number
}

export interface TestCluster {
  /** Every node (primaries and replicas), as the store's `cluster` option takes them. */
  readonly nodes: ReadonlyArray<ClusterNode>
  /** The port of the primary that serves `key` now (CLUSTER KEYSLOT + CLUSTER SLOTS). */
  readonly primaryOf: (key: string) => Effect.Effect<number>
  /** SIGKILL the node on `port`. */
  readonly kill: (port: number) => Effect.Effect<void>
  /** Waits (real time, bounded) until every slot is served again by a live primary. */
  readonly healthy: (millis: number) => Effect.Effect<boolean>
  /** A plain cluster client for looking behind the store's back (connected on first use). */
  readonly admin: Cluster
}

const canListen = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const server = net.createServer()
    server.once("error", () => resolve(false))
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)))
  })

/**
 * Distinct ports that are free, each with its cluster bus port (port + 10000) free too. They are
 * drawn from 20000-22767, so that both are below the ephemeral range (32768 and up) that the OS
 * hands out to outgoing connections and to the other tests' `listen(0)`.
 */
const freePorts = async (n: number): Promise<Array<number>> => {
  const ports = new Set<number>()
  while (ports.size < n) {
    const port = 20_000 + Math.floor(Math.random() * 2_768)
    if (ports.has(port)) continue
    if ((await canListen(port)) && (await canListen(port + 10_000))) ports.add(port)
  }
  return Array.from(ports)
}

const launch = (port: number, dir: string, nodeTimeoutMillis: number): Promise<ChildProcess> =>
  launchRedis(
    port,
    [
      "--dir",
      dir,
      "--cluster-enabled",
      "yes",
      "--cluster-config-file",
      `nodes-${port}.conf`,
      "--cluster-node-timeout",
      String(nodeTimeoutMillis),
      // A replica takes over however long it was apart from its primary (a loaded machine may
      // have delayed its replication pings).
      "--cluster-replica-validity-factor",
      "0"
    ],
    15_000
  )

const run = (command: string, args: Array<string>, timeoutMillis: number): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(command, args, { timeout: timeoutMillis }, (error, stdout, stderr) =>
      error
        ? reject(new Error(`${command} ${args.join(" ")}: ${error.message}\n${stdout}\n${stderr}`))
        : resolve(stdout)
    )
  )

const cli = (port: number, ...args: Array<string>) =>
  run("redis-cli", ["-h", "127.0.0.1", "-p", String(port), ...args], 5_000)

const sleep = (millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis))

/** Polls (real time) until `check` holds or `millis` pass. */
const until = async (check: () => Promise<boolean>, millis: number): Promise<boolean> => {
  const end = performance.now() + millis
  while (performance.now() < end) {
    if (await check().catch(() => false)) return true
    await sleep(100)
  }
  return false
}

interface SlotRange {
  readonly from: number
  readonly to: number
  readonly primary: number
}

const slotsOf = async (port: number): Promise<Array<SlotRange>> => {
  const client = new Redis(port, "127.0.0.1", { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on("error", () => {})
  try {
    await client.connect()
    const reply = (await client.call("CLUSTER", "SLOTS")) as Array<[number, number, [string, number]]>
    return reply.map(([from, to, [, primary]]) => ({ from, to, primary }))
  } finally {
    client.disconnect()
  }
}

/**
 * Three primaries (and a replica each with `replicas: true`). `nodeTimeoutMillis` is how long a
 * silent node takes to be judged failed (and so how long a failover takes): keep it low for the
 * failover test, higher where a loaded machine must not cause one.
 */
export const startCluster = (options: {
  readonly replicas: boolean
  readonly nodeTimeoutMillis: number
}): Effect.Effect<TestCluster, never, Scope.Scope> =>
  Effect.gen(function* () {
    const dir = yield* Effect.acquireRelease(
      Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "circuitry-cluster-"))),
      (dir) => Effect.promise(() => fs.rm(dir, { recursive: true, force: true }))
    )
    const count = options.replicas ? 6 : 3
    const ports = yield* Effect.promise(() => freePorts(count))
    const children = new Map<number, ChildProcess>()
    yield* Effect.addFinalizer(() =>
      Effect.promise(() => Promise.all(Array.from(children.values(), stopRedis)).then(() => undefined))
    )
    yield* Effect.promise(() =>
      Promise.all(
        ports.map((port) =>
          launch(port, dir, options.nodeTimeoutMillis).then((child) => void children.set(port, child))
        )
      )
    )
    yield* Effect.promise(() =>
      run(
        "redis-cli",
        [
          "--cluster",
          "create",
          ...ports.map((port) => `127.0.0.1:${port}`),
          "--cluster-replicas",
          options.replicas ? "1" : "0",
          "--cluster-yes"
        ],
        60_000
      )
    )
    // Ready when every node says the cluster is ok and, with replicas, every replica is in sync.
    const ready = yield* Effect.promise(() =>
      until(async () => {
        for (const port of ports) {
          if (!(await cli(port, "CLUSTER", "INFO")).includes("cluster_state:ok")) return false
          const replication = await cli(port, "INFO", "replication")
          if (replication.includes("role:slave") && !replication.includes("master_link_status:up")) return false
        }
        return true
      }, 60_000)
    )
    if (!ready) return yield* Effect.die(new Error("the test cluster did not become ready within 60 seconds"))

    const alive = () =>
      Array.from(children.entries()).filter(([, child]) => child.exitCode === null && child.signalCode === null)

    const admin = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const client = new Cluster(
          ports.map((port) => ({ host: "127.0.0.1", port })),
          { redisOptions: { connectTimeout: 2_000 } }
        )
        client.on("error", () => {})
        return client
      }),
      (client) => Effect.sync(() => client.disconnect())
    )

    return {
      nodes: ports.map((port) => ({ host: "127.0.0.1", port })),
      primaryOf: (key) =>
        Effect.promise(async () => {
          const [port] = alive()[0]!
          const slot = Number((await cli(port, "CLUSTER", "KEYSLOT", key)).trim())
          const range = (await slotsOf(port)).find((r) => r.from <= slot && slot <= r.to)
          if (range === undefined) throw new Error(`no primary serves slot ${slot}`)
          return range.primary
        }),
      kill: (port) =>
        Effect.promise(async () => {
          const child = children.get(port)
          if (child !== undefined) await stopRedis(child)
        }),
      healthy: (millis) =>
        Effect.promise(() =>
          until(async () => {
            const live = new Set(alive().map(([port]) => port))
            for (const port of live) {
              if (!(await cli(port, "CLUSTER", "INFO")).includes("cluster_state:ok")) return false
              const ranges = await slotsOf(port)
              const covered = ranges.reduce((n, r) => n + (r.to - r.from + 1), 0)
              if (covered !== 16384 || ranges.some((r) => !live.has(r.primary))) return false
            }
            return true
          }, millis)
        ),
      admin
    } satisfies TestCluster
  })
