/**
 * @circuitry/retry's targets, from its issue:
 *
 * - `retry`: a first attempt that succeeds, through `Retry.retry` with a budget, against plain
 *   `Effect.retry` with the same schedule (`Schedule.recurs(3)`): at most 1.2x.
 * - `hedging`: `withHedging` (fixed 100 ms delay: no hedge fires) on a fast success, a loopback
 *   HTTP GET (node:http, keep-alive: what an HTTP client hedges). The targets (as issue 22 restates
 *   them): at most 1.10x the same call run in a fiber of its own and nothing else (`forked`: the
 *   least any hedging costs whose first attempt can be interrupted when a hedge wins, which needs
 *   it in a fiber of its own, see `forked` below), and at most 1.5x the bare call. Beside it, for
 *   information: a round trip over a loopback TCP socket (a server in the same process echoes one
 *   byte: the cheapest remote call there is), an effect that only crosses one event-loop turn
 *   (`setImmediate`) and `Effect.succeed`, to say what a hedge costs in absolute terms: one fiber
 *   for the copy.
 */
import * as Edition from "@circuitry/core/Edition"
import { Hedging, Retry, RetryBudget } from "@circuitry/retry"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Schedule from "effect/Schedule"
import * as Scope from "effect/Scope"
import * as http from "node:http"
import * as net from "node:net"
import * as cases from "../cases.js"
import type { Case } from "../harness.js"
import { measure } from "../harness.js"
import type { GroupResult, TimedGroup } from "../protocol.js"
import { scaled } from "../protocol.js"
import { pairedRatio } from "../stats.js"
import type { Guard, Work } from "../subjects.js"
import type { Verdict } from "../targets.js"

export const TITLES: Record<string, string> = {
  retry: "Retry.retry: a first attempt that succeeds",
  hedging: "withHedging: a fast success, no hedge fired"
}

export const LIMITS = {
  /** Retry.retry with a budget / Effect.retry, same schedule */
  retryRatio: 1.2,
  /** withHedging / the bare effect, on a loopback HTTP GET */
  hedgingRatio: 1.5,
  /** withHedging / the same call in a fiber of its own, on a loopback HTTP GET */
  hedgingForkedRatio: 1.1
} as const

// -- retry -----------------------------------------------------------------------------------------

export const retryCases = async (): Promise<ReadonlyArray<Case>> => {
  const work: Work = Effect.succeed(1)
  const schedule = Schedule.recurs(3)
  const scope = Effect.runSync(Scope.make())
  const budget = await Effect.runPromise(Effect.provideService(RetryBudget.make({ name: "bench" }), Scope.Scope, scope))
  const plain: Guard = (self) => Effect.retry(self, schedule)
  const budgeted: Guard = (self) => Retry.retry(self, { schedule, budget })
  const unbudgeted: Guard = (self) => Retry.retry(self, { schedule })
  return [
    cases.inFiber("bare", "the effect, bare", (self) => self, work),
    cases.inFiber("effect-retry", "Effect.retry(self, Schedule.recurs(3))", plain, work),
    cases.inFiber("retry-budget", "Retry.retry, Schedule.recurs(3), with a RetryBudget", budgeted, work),
    cases.inFiber("retry", "Retry.retry, Schedule.recurs(3), no budget", unbudgeted, work)
  ]
}

// -- hedging ---------------------------------------------------------------------------------------

/** A one-byte echo over a loopback TCP socket, as an Effect; `close` ends the server. */
const loopback = async (): Promise<{ readonly echo: Work; readonly close: () => void }> => {
  const server = net.createServer((socket) => {
    socket.setNoDelay(true)
    socket.on("data", (data) => socket.write(data))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as net.AddressInfo
  const client = net.connect(port, "127.0.0.1")
  client.setNoDelay(true)
  await new Promise<void>((resolve) => client.once("connect", () => resolve()))
  // One call at a time (the rows run their calls in turn): the reply belongs to the waiting call.
  let waiting: (() => void) | undefined
  client.on("data", () => {
    const resume = waiting
    waiting = undefined
    resume?.()
  })
  const echo: Work = Edition.callback<number, string>((resume) => {
    waiting = () => resume(Effect.succeed(1))
    client.write("x")
  })
  return {
    echo,
    close: () => {
      client.destroy()
      server.close()
    }
  }
}

/** A GET to an HTTP server in the same process (node:http, keep-alive), as an Effect. */
const localHttp = async (): Promise<{ readonly get: Work; readonly close: () => void }> => {
  const server = http.createServer((_, res) => res.end("ok"))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()))
  const { port } = server.address() as net.AddressInfo
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const get: Work = Edition.callback<number, string>((resume) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
      res.resume()
      res.on("end", () => resume(Effect.succeed(res.statusCode ?? 0)))
    })
    req.on("error", () => resume(Effect.succeed(0)))
  })
  return {
    get,
    close: () => {
      agent.destroy()
      server.close()
    }
  }
}

const nextTurn: Work = Edition.callback<number, string>((resume) => {
  const handle = setImmediate(() => resume(Effect.succeed(1)))
  return Effect.sync(() => clearImmediate(handle))
})

/**
 * The effect in a fiber of its own, started at once with the caller's context
 * (`Edition.withCaller`), the caller waiting in one `Edition.callback` whose canceller interrupts
 * it: no timer, no budget, no second copy. A hedged call's first attempt must be in a fiber of its
 * own, because a hedge that wins must be able to interrupt it and let the caller go on (an Effect
 * fiber can only be interrupted whole), so this row is the floor under any `withHedging` on a fast
 * success.
 */
const forked: Guard = (self) =>
  Edition.withCaller((caller) =>
    Edition.callback<unknown, unknown>((resume) => {
      const copy = caller.fork(self)
      copy.addObserver((exit) => resume(exit))
      return Fiber.interrupt(copy)
    })
  )

export const hedgingCases = async (): Promise<{
  readonly cases: ReadonlyArray<Case>
  readonly close: () => Promise<void>
}> => {
  const scope = Effect.runSync(Scope.make())
  const hedging = await Effect.runPromise(
    Effect.provideService(Hedging.make({ name: "bench", delay: "100 millis" }), Scope.Scope, scope)
  )
  const hedged: Guard = (self) => Hedging.withHedging(self, hedging)
  const bare: Guard = (self) => self
  const { echo, close } = await loopback()
  const { get, close: closeHttp } = await localHttp()
  return {
    cases: [
      cases.inFiber("http-bare", "loopback HTTP GET (node:http, keep-alive), bare", bare, get),
      cases.inFiber("http-hedged", "loopback HTTP GET, withHedging (100 ms)", hedged, get),
      cases.inFiber("http-forked", "loopback HTTP GET, in a fiber of its own (the floor under hedging)", forked, get),
      cases.inFiber("bare", "loopback TCP round trip, bare", bare, echo),
      cases.inFiber("hedged", "loopback TCP round trip, withHedging (100 ms)", hedged, echo),
      cases.inFiber("forked", "loopback TCP round trip, in a fiber of its own (the floor under hedging)", forked, echo),
      cases.inFiber("turn-bare", "one event-loop turn (setImmediate), bare", bare, nextTurn),
      cases.inFiber("turn-hedged", "one event-loop turn (setImmediate), withHedging", hedged, nextTurn),
      cases.inFiber("sync-bare", "Effect.succeed, bare", bare, Effect.succeed(1)),
      cases.inFiber("sync-hedged", "Effect.succeed, withHedging", hedged, Effect.succeed(1))
    ],
    close: () => {
      close()
      closeHttp()
      return Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
}

export const run = async (group: "retry" | "hedging"): Promise<TimedGroup> => {
  if (group === "retry") {
    const rows = await measure(await retryCases(), { calls: scaled(20_000), warmup: scaled(10_000), repeats: 11 })
    return {
      _tag: "Timed",
      group,
      floor: "effect-retry",
      rows,
      notes: ["Many calls inside one Effect.gen loop; the effect succeeds at once, so no retry happens."]
    }
  }
  const { cases: rows, close } = await hedgingCases()
  try {
    const measured = await measure(rows, { calls: scaled(3_000), warmup: scaled(2_000), repeats: 11 })
    return {
      _tag: "Timed",
      group,
      floor: "bare",
      rows: measured,
      notes: [
        "Many calls inside one Effect.gen loop, one at a time. The loopback server runs in the same process, so its CPU time counts in both rows.",
        "The x floor column compares every row with the bare loopback TCP round trip; the targets compare the hedged loopback HTTP GET with the same GET in a fiber of its own and with it bare. The TCP, event-loop-turn and Effect.succeed rows are for information.",
        "What a hedge costs when none fires: one fiber for the copy (started at once, not scheduled), one timer entry in the Hedging's shared sweeper, and one more resumption of the caller.",
        "The forked rows run the effect in a fiber of its own and nothing else: the first attempt of a hedged call must be interruptible apart from its caller (when a hedge wins), so no withHedging can cost less than them."
      ]
    }
  } finally {
    await close()
  }
}

// -- verdicts ---------------------------------------------------------------------------------------

const ratio = (results: ReadonlyArray<GroupResult>, group: string, id: string, to: string): number | undefined => {
  const g = results.find((r): r is TimedGroup => r._tag === "Timed" && r.group === group)
  const a = g?.rows.find((r) => r.id === id)
  const b = g?.rows.find((r) => r.id === to)
  return a === undefined || b === undefined ? undefined : pairedRatio(a.samples, b.samples)
}

const verdict = (target: string, value: number | undefined, limit: number): Verdict => ({
  target,
  measured: value === undefined ? "not measured" : `${value.toFixed(2)}x`,
  pass: value === undefined ? undefined : value <= limit
})

export const verdicts = (results: ReadonlyArray<GroupResult>): ReadonlyArray<Verdict> => [
  verdict(
    `Retry.retry with a budget, first attempt: <= ${LIMITS.retryRatio}x Effect.retry with the same schedule`,
    ratio(results, "retry", "retry-budget", "effect-retry"),
    LIMITS.retryRatio
  ),
  verdict(
    `withHedging, fast success (loopback HTTP GET), no hedge fired: <= ${LIMITS.hedgingForkedRatio.toFixed(2)}x the same call in a fiber of its own`,
    ratio(results, "hedging", "http-hedged", "http-forked"),
    LIMITS.hedgingForkedRatio
  ),
  verdict(
    `withHedging, fast success (loopback HTTP GET), no hedge fired: <= ${LIMITS.hedgingRatio}x the bare effect`,
    ratio(results, "hedging", "http-hedged", "http-bare"),
    LIMITS.hedgingRatio
  )
]
