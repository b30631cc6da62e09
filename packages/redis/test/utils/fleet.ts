/**
 * A fleet of breaker members on one Redis, some in child processes (fixtures/fleetProcess.ts) and
 * some in the test's own process (fixtures/fleetHost.ts directly). Each member has a
 * RedisBreakerStore, and so connections, of its own. The harness sends a command to every host and
 * collects every event the members report, in the order they arrive.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import * as readline from "node:readline"
import { fileURLToPath } from "node:url"
import * as Edition from "@circuitry/core/Edition"
import { childExecArgv } from "@circuitry/testkit"
import { Effect, type Scope } from "effect"
import { Redis } from "ioredis"
import { type Command, type Event, makeHost } from "../fixtures/fleetHost.js"
import { eventually } from "./server.js"

export type { Command, Event } from "../fixtures/fleetHost.js"

export interface FleetOptions {
  readonly url: string
  readonly prefix: string
  /** Child processes, each holding `perProcess` members. */
  readonly processes: number
  readonly perProcess: number
  /** Members in the test's own process. */
  readonly inProcess: number
  /** How long the children may take to start (tsx compiles the sources: slow on a loaded machine). */
  readonly startMillis?: number
}

export interface Fleet {
  readonly size: number
  /** The host (its `lag` reports' `host`) holding `member`. */
  readonly hostOf: (member: number) => number
  /** Every event reported so far, in arrival order. */
  readonly events: ReadonlyArray<Event>
  /** Sends `command` to every host and waits (at most `millis`) until each has carried it out. */
  readonly send: (command: Command, millis?: number) => Effect.Effect<void>
  /** Waits (at most `millis`) until `condition` holds of the events; returns whether it held. */
  readonly until: (condition: (events: ReadonlyArray<Event>) => boolean, millis?: number) => Effect.Effect<boolean>
  /** Each host's event-loop delay (ms) since the last call: how late its callbacks ran. */
  readonly lag: Effect.Effect<ReadonlyArray<Extract<Event, { type: "lag" }>>>
}

const fixture = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures", "fleetProcess.ts")

const stop = (child: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 2_000)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.stdin!.end() // the member closes its breakers and connections, then exits
  })

/** Starts the fleet; its processes and members are stopped when the scope closes, even on failure. */
export const startFleet = (options: FleetOptions): Effect.Effect<Fleet, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const events: Array<Event> = []
    const senders: Array<(command: Command) => void> = []
    const size = options.processes * options.perProcess + options.inProcess
    for (let p = 0; p < options.processes; p++) {
      const args = [options.url, options.prefix, String(p), String(p * options.perProcess), String(options.perProcess)]
      const child = yield* Effect.acquireRelease(
        Effect.sync(() =>
          spawn(process.execPath, [...childExecArgv, fixture, ...args], {
            stdio: ["pipe", "pipe", "inherit"],
            cwd: path.dirname(fixture)
          })
        ),
        (c) => Effect.promise(() => stop(c))
      )
      readline.createInterface({ input: child.stdout! }).on("line", (line) => {
        try {
          events.push(JSON.parse(line) as Event)
        } catch {
          // not an event (a stray log line): ignored
        }
      })
      senders.push((command) => child.stdin!.write(JSON.stringify(command) + "\n"))
    }
    if (options.inProcess > 0) {
      const first = options.processes * options.perProcess
      const ids = Array.from({ length: options.inProcess }, (_, i) => first + i)
      const { handle } = yield* makeHost(
        { url: options.url, prefix: options.prefix, ids, host: options.processes },
        (event) => events.push(event)
      )
      senders.push((command) => Effect.runFork(handle(command)))
    }
    const hosts = senders.length

    const until = (condition: (events: ReadonlyArray<Event>) => boolean, millis = 30_000) =>
      eventually(
        Effect.sync(() => condition(events)),
        millis,
        2
      )

    const ready = yield* until((es) => es.filter((e) => e.type === "ready").length === size, options.startMillis)
    if (!ready) {
      const seen = events.filter((e) => e.type === "ready").length
      return yield* Effect.fail(new Error(`only ${seen} of ${size} fleet members started`))
    }
    // Every member runs the test's Effect major: the children too (childExecArgv).
    const majors = new Set(events.flatMap((e) => (e.type === "ready" ? [e.major] : [])))
    if (majors.size !== 1 || !majors.has(Edition.major)) {
      return yield* Effect.fail(
        new Error(`fleet members ran effect ${[...majors].join(", ")}, the test ${Edition.major}`)
      )
    }

    const send = (command: Command, millis = 60_000) =>
      Effect.gen(function* () {
        const from = events.length
        for (const sendTo of senders) sendTo(command)
        const done = (es: ReadonlyArray<Event>) =>
          new Set(es.slice(from).flatMap((e) => (e.type === "done" && e.op === command.op ? [e.host] : [])))
        if (!(yield* until((es) => done(es).size === hosts, millis))) {
          return yield* Effect.die(new Error(`${command.op}: only ${done(events).size} of ${hosts} hosts answered`))
        }
      })

    const lag = Effect.gen(function* () {
      const from = events.length
      yield* send({ op: "lag" })
      return events.slice(from).flatMap((e) => (e.type === "lag" ? [e] : []))
    })

    const hostOf = (member: number) => Math.min(options.processes, Math.floor(member / options.perProcess))

    return { size, hostOf, events, send, until, lag }
  })

/** Percentiles (nearest rank) of `values`. */
export const percentile = (values: ReadonlyArray<number>, p: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/**
 * Counts the commands clients send to the server at `url` (MONITOR, on a connection of its own),
 * by name, leaving out what scripts call (those are part of the script's one round trip) and this
 * harness's own INFO and CONFIG. `take` returns the counts since the last `take`; `takeOf` only
 * those of the commands that name one circuit's keys (its hash tag, `{circuit}`).
 */
export interface CommandMonitor {
  readonly take: Effect.Effect<Record<string, number>>
  readonly takeOf: (circuit: string) => Effect.Effect<Record<string, number>>
}

export const monitorCommands = (url: string): Effect.Effect<CommandMonitor, never, Scope.Scope> =>
  Effect.gen(function* () {
    let seen: Array<{ readonly name: string; readonly args: ReadonlyArray<string> }> = []
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => new Redis(url, { lazyConnect: true })),
      (c) => Effect.sync(() => c.disconnect())
    )
    client.on("error", () => {})
    const monitor = yield* Effect.acquireRelease(
      Effect.promise(() => client.monitor()),
      (m) => Effect.sync(() => m.disconnect())
    )
    monitor.on("error", () => {})
    monitor.on("monitor", (_time: string, args: Array<string>, source: string) => {
      const name = String(args[0]).toLowerCase()
      if (source === "lua" || name === "info" || name === "config") return
      seen.push({ name, args })
    })
    const take = (keep: (args: ReadonlyArray<string>) => boolean) =>
      Effect.sync(() => {
        const counts: Record<string, number> = {}
        for (const { args, name } of seen) if (keep(args)) counts[name] = (counts[name] ?? 0) + 1
        seen = []
        return counts
      })
    return {
      take: take(() => true),
      takeOf: (circuit) => take((args) => args.some((arg) => String(arg).includes(`{${circuit}}`)))
    }
  })

/** The sum of `counts`. */
export const total = (counts: Record<string, number>): number => Object.values(counts).reduce((n, c) => n + c, 0)

/** The server's per-command call counts (INFO commandstats), e.g. `{ evalsha: 12, hset: 12 }`. */
export const commandStats = (info: string): Record<string, number> => {
  const stats: Record<string, number> = {}
  for (const line of info.split("\r\n")) {
    const match = /^cmdstat_([^:]+):calls=(\d+)/.exec(line)
    if (match !== null) stats[match[1]!] = Number(match[2])
  }
  return stats
}
