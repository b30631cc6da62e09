/**
 * A fleet of 50 members on one Redis: 4 child processes of 10 members and 10 members in the test's
 * own process, each member a RedisBreakerStore (two connections) of its own, on a redis-server of
 * the test's own (so that no other test's commands are counted). Real time throughout: real
 * processes, a real server. Each figure is logged with the machine's load average, and
 * docs/redis.md ("Fleet of 50") keeps the last measured ones.
 */
import * as Edition from "@circuitry/core/Edition"
import { assert, layerLive } from "@circuitry/testkit"
import { Effect } from "effect"
import * as os from "node:os"
import {
  type CommandMonitor,
  commandStats,
  type Event,
  type Fleet,
  monitorCommands,
  percentile,
  startFleet,
  total
} from "./utils/fleet.js"
import { startServer, type TestServer, uniquePrefix } from "./utils/server.js"

class TheFleet extends Edition.KeyClass<
  TheFleet,
  {
    readonly fleet: Fleet
    readonly server: TestServer
    readonly commands: CommandMonitor
  }
>()("TheFleet") {}

const FleetLive = Edition.layerScoped(
  TheFleet,
  Effect.gen(function* () {
    const server = yield* startServer
    const commands = yield* monitorCommands(server.url)
    const fleet = yield* startFleet({
      url: server.url,
      prefix: uniquePrefix("fleet"),
      processes: 4,
      perProcess: 10,
      inProcess: 10,
      startMillis: 90_000
    })
    return { fleet, server, commands }
  }).pipe(Effect.orDie)
)

/** What an effect succeeds with (`Effect.Effect.Success` on Effect 3, `Effect.Success` on 4). */
type SuccessOf<T> = T extends Effect.Effect<infer A, infer _E, infer _R> ? A : never

const log = (line: string) => Effect.sync(() => process.stdout.write(`[fleet of 50] ${line}\n`))
const loadAverage = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")

const of = <T extends Event["type"]>(events: ReadonlyArray<Event>, type: T, circuit: string) =>
  events.filter((e): e is Extract<Event, { type: T }> => e.type === type && "circuit" in e && e.circuit === circuit)

/** Commands executed by the server (scripts' own calls included) since the last RESETSTAT. */
const executed = (server: TestServer) =>
  Effect.map(
    Effect.promise(() => server.admin.info("commandstats")),
    (info) => {
      const stats = commandStats(info)
      delete stats["info"]
      delete stats["config|resetstat"]
      return stats
    }
  )

/** Starts the server's counts again: RESETSTAT for what it executed, and the MONITOR tally of round trips. */
const resetCounts = Effect.gen(function* () {
  const { commands, server } = yield* TheFleet
  yield* Effect.promise(() => server.admin.config("RESETSTAT"))
  yield* commands.take
})

/** A host whose event loop ran this late (ms, p99) was not scheduled: the machine, not the fleet, was slow. */
const STALLED_MILLIS = 50

layerLive(FleetLive, { timeout: 120_000 })("a fleet of 50 members on one Redis", (it) => {
  it.effect(
    "a trip on one member reaches all 50 with p99 < 100 ms past bare pub/sub's",
    () =>
      Effect.gen(function* () {
        const { fleet } = yield* TheFleet
        const circuit = "trip"
        yield* fleet.send({ op: "breaker", circuit, consecutiveFailures: 1, openForMillis: 60_000 })
        // One round: 5 trips on members in different processes, each followed by a reset that closes
        // the fleet again. Latency: from just before the tripping call to each member's `changes`.
        // Each host's event-loop delay is read for each trip (from the trip until every member has
        // opened): the longest it could not run any callback. Latency less that delay is the
        // propagation excluding the host's scheduling. The baseline, measured just before each trip
        // from the same member's host to the same 50 members' hosts: bare pub/sub (a PUBLISH heard on
        // plain subscribers), what the machine makes of any message now.
        const round = (label: string, trials = 5) =>
          Effect.gen(function* () {
            const raw: Array<number> = []
            const corrected: Array<number> = []
            const bare: Array<number> = []
            let lagP99 = 0
            for (let trial = 0; trial < trials; trial++) {
              const tripper = (trial * 11 + 3) % fleet.size
              const id = `${label}-${trial}`
              const pingFrom = fleet.events.length
              yield* fleet.send({ op: "ping", member: tripper, id })
              const heard = (es: ReadonlyArray<Event>) =>
                es.slice(pingFrom).flatMap((e) => (e.type === "heard" && e.id === id ? [e] : []))
              assert.isTrue(
                yield* fleet.until((es) => heard(es).length === fleet.size, 10_000),
                `trial ${trial}: ${heard(fleet.events).length} of ${fleet.size} members heard the bare PUBLISH`
              )
              const [pinging] = fleet.events
                .slice(pingFrom)
                .flatMap((e) => (e.type === "pinging" && e.id === id ? [e] : []))
              for (const e of heard(fleet.events)) if (e.member !== tripper) bare.push(e.wall - pinging!.wall)
              yield* fleet.lag
              const from = fleet.events.length
              yield* fleet.send({ op: "trip", circuit, member: tripper })
              const opened = (es: ReadonlyArray<Event>) =>
                of(es.slice(from), "transition", circuit).filter((e) => e.to === "Open")
              assert.isTrue(
                yield* fleet.until((es) => opened(es).length === fleet.size, 10_000),
                `trial ${trial}: ${opened(fleet.events).length} of ${fleet.size} members opened`
              )
              const lag = new Map((yield* fleet.lag).map((l) => [l.host, l]))
              lagP99 = Math.max(lagP99, ...[...lag.values()].map((l) => l.p99))
              const tripping = of(fleet.events.slice(from), "tripping", circuit)[0]!
              for (const e of opened(fleet.events)) {
                if (e.member === tripper) continue
                raw.push(e.wall - tripping.wall)
                corrected.push(Math.max(0, e.wall - tripping.wall - Math.round(lag.get(fleet.hostOf(e.member))!.max)))
              }
              const back = fleet.events.length
              yield* fleet.send({ op: "reset", circuit, member: (tripper + 1) % fleet.size })
              assert.isTrue(
                yield* fleet.until(
                  (es) =>
                    of(es.slice(back), "transition", circuit).filter((e) => e.to === "Closed").length === fleet.size,
                  10_000
                ),
                `trial ${trial}: the reset did not close every member`
              )
            }
            assert.strictEqual(raw.length, trials * (fleet.size - 1))
            const figures = {
              p50: percentile(raw, 50),
              p99: percentile(raw, 99),
              max: Math.max(...raw),
              correctedP99: percentile(corrected, 99),
              bareP50: percentile(bare, 50),
              bareP99: percentile(bare, 99),
              lagP99
            }
            yield* log(
              `${label}, ${raw.length} adoptions: p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms; bare pub/sub to the same members: p50 ${figures.bareP50} ms, p99 ${figures.bareP99} ms; less each host's event-loop delay: p99 ${figures.correctedP99} ms; hosts' event-loop delay p99 up to ${lagP99} ms; load average ${loadAverage()}`
            )
            return figures
          })
        // What the breaker adds to bare pub/sub is asserted: its p99 is within 100 ms of bare pub/sub's
        // p99 (on an idle machine, bare pub/sub's is a few ms: the p99 < 100 ms docs/redis.md gives).
        // A round on stalled hosts (event-loop delay p99 past STALLED_MILLIS) is measured again, at
        // most 3 rounds; when every round was, the propagation less the hosts' scheduling is asserted
        // against the same bound instead, and the log says so.
        // The first trips of fresh processes run code V8 has not compiled yet: two warm-up trips first.
        yield* round("trip propagation, warm-up", 2)
        const bound = (f: SuccessOf<ReturnType<typeof round>>) => 100 + f.bareP99
        const stalled = (f: SuccessOf<ReturnType<typeof round>>) => f.p99 >= bound(f) && f.lagP99 >= STALLED_MILLIS
        let figures = yield* round("trip propagation")
        for (let again = 0; again < 2 && stalled(figures); again++) figures = yield* round("trip propagation")
        assert.isBelow(figures.p50, 100 + figures.bareP50)
        const what = `p99 ${figures.p99} ms (less the hosts' scheduling: ${figures.correctedP99} ms), bare pub/sub p99 ${figures.bareP99} ms, hosts' event-loop delay p99 ${figures.lagP99} ms`
        if (stalled(figures)) {
          yield* log(`every round was slow on stalled hosts: asserting the p99 less the hosts' event-loop delay`)
          assert.isBelow(figures.correctedP99, bound(figures), what)
        } else {
          assert.isBelow(figures.p99, bound(figures), what)
        }
      }),
    180_000
  )

  it.effect(
    "a failure storm: exactly one probe per half-open episode for the whole fleet, and bounded commands",
    () =>
      Effect.gen(function* () {
        const { commands, fleet, server } = yield* TheFleet
        const openForMillis = 300
        const round = (circuit: string, millis = 6_000) =>
          Effect.gen(function* () {
            // sent once every member's breaker is made and its first load answered
            yield* fleet.send({ op: "breaker", circuit, consecutiveFailures: 5, openForMillis })
            yield* resetCounts
            const from = fleet.events.length
            const started = Date.now()
            // every member calls every 40 ms (1,250 calls a second for the fleet), every call fails
            yield* fleet.send({ op: "load", circuit, millis, everyMillis: 40, failing: 1 })
            const seconds = (Date.now() - started) / 1000
            const trips = yield* commands.take
            const stats = yield* executed(server)
            const events = fleet.events.slice(from)
            const loaded = of(events, "loaded", circuit)
            const calls = loaded.reduce((n, e) => n + e.calls, 0)
            // Every probe fails and reopens the fleet for openFor from its end, so the next
            // episode's probe comes openFor later at the earliest: two probes closer than that
            // probed one episode twice. A probe whose lease did not come within the breaker's store
            // deadline (250 ms) goes alone, by design (the breaker decides locally when the store
            // is slow): those are counted apart.
            const all = of(events, "probe", circuit).sort((x, y) => x.wall - y.wall)
            const probes = all.filter((p) => p.leased)
            const gaps = probes.slice(1).map((p, i) => p.wall - probes[i]!.wall)
            const twice = probes.slice(1).filter((_, i) => gaps[i]! < openForMillis)
            const stale = all.filter((p) => p.state !== "HalfOpen")
            const alone = all.length - probes.length
            yield* log(
              `storm: ${calls} calls in ${seconds.toFixed(1)} s: ${probes.length} leased probes (gaps ${gaps.join(",")} ms), ${twice.length} a second probe of an episode, ${alone} alone, ${stale.length} stale; load average ${loadAverage()}`
            )
            yield* log(
              `storm: ${total(trips)} round trips (${(total(trips) / seconds).toFixed(0)}/s, ${(total(trips) / Math.max(1, probes.length + alone)).toFixed(0)} per episode) ${JSON.stringify(trips)}; ${total(stats)} commands executed (${(total(stats) / seconds).toFixed(0)}/s)`
            )
            return { probes, twice, stale, alone, perSecond: total(trips) / seconds }
          })
        // A first, short storm warms the members' code paths up (V8 compiles them: on a loaded
        // machine their first lease requests outlive the deadline). Then every round must have no
        // episode probed twice, no stale probe and bounded round trips; rounds go on (at most 3)
        // until 8 leased probes were seen in all, at least 4 (on a machine so loaded that leases
        // do not come in time, fewer probes are leased: see the load average in the log).
        yield* round("storm-warm-up", 2_000)
        let leased = 0
        for (let r = 1; r <= 3 && leased < 8; r++) {
          const figures = yield* round(`storm-${r}`)
          leased += figures.probes.length
          assert.deepStrictEqual(figures.twice, [], `storm-${r}: an episode probed twice`)
          assert.deepStrictEqual(figures.stale, [], `storm-${r}: a probe after its episode ended`)
          // The cost is per episode (each member asks for the lease: its first half-open call, then,
          // refused, once per back-off of 250 ms until it hears the reopened verdict; the prober's
          // verdict) and per trip (each member's failures before it, batched), never per call: the
          // fleet calls 1,250 times a second.
          assert.isBelow(figures.perSecond, 10 * fleet.size, `storm-${r}: round trips a second`)
        }
        // several episodes, each probed once by one member of the whole fleet
        assert.isAtLeast(leased, 4)
      }),
    180_000
  )

  it.effect(
    "a brownout on a closed circuit: the failures reach Redis in batches, not one command each",
    () =>
      Effect.gen(function* () {
        const { commands, fleet, server } = yield* TheFleet
        const round = (circuit: string) =>
          Effect.gen(function* () {
            // half the calls fail, and the policy never trips: every failure and success is reported
            yield* fleet.send({ op: "breaker", circuit, consecutiveFailures: 1_000_000, openForMillis: 1_000 })
            yield* resetCounts
            const from = fleet.events.length
            const started = Date.now()
            // Open loop: every call is offered even when a host's timers run late (a loaded machine),
            // so that the fleet fails more often than batching allows round trips however busy it is.
            yield* fleet.send({ op: "load", circuit, millis: 8_000, everyMillis: 20, failing: 0.5, openLoop: true })
            const seconds = (Date.now() - started) / 1000
            const trips = yield* commands.take
            const stats = yield* executed(server)
            const loaded = of(fleet.events.slice(from), "loaded", circuit)
            const calls = loaded.reduce((n, e) => n + e.calls, 0)
            const failures = loaded.reduce((n, e) => n + e.failures, 0)
            // Batching's bound: per member, 5 batches at once, then one a second, each of at most 4
            // sends (the outbox's BATCH_STEPS: failures before a success, the success, failures since,
            // and, when a success comes while the batch is being sent, the failures before it).
            const bound = 4 * fleet.size * (5 + Math.ceil(seconds) + 1)
            yield* log(
              `brownout: ${calls} calls, ${failures} failed, in ${seconds.toFixed(1)} s: ${total(trips)} round trips (${(total(trips) / seconds).toFixed(0)}/s, ${(total(trips) / failures).toFixed(3)} per failure; bound ${bound}) ${JSON.stringify(trips)}; ${total(stats)} commands executed (${(total(stats) / seconds).toFixed(0)}/s); load average ${loadAverage()}`
            )
            return { failures, bound, trips: total(trips) }
          })
        // The bound says something only when there are more failures than it allows round trips
        // (a starved machine calls less): such a round is measured again, at most 3 rounds.
        let figures = yield* round("brownout-1")
        for (let again = 2; again <= 3 && figures.failures <= figures.bound; again++) {
          figures = yield* round(`brownout-${again}`)
        }
        assert.isAbove(figures.failures, figures.bound)
        assert.isAtMost(figures.trips, figures.bound)
      }),
    180_000
  )

  it.effect(
    "closed successes cost Redis nothing",
    () =>
      Effect.gen(function* () {
        const { commands, fleet, server } = yield* TheFleet
        const circuit = "quiet"
        yield* fleet.send({ op: "breaker", circuit, consecutiveFailures: 5, openForMillis: 1_000 })
        // Counted: the commands that name this circuit's keys (the tests before may still owe their
        // circuits' last batch of counts; those name theirs). The baseline: what an idle fleet sends
        // for it in as long as the load lasts (a window of the live Clock).
        yield* resetCounts
        yield* Effect.sleep("3 seconds")
        const idle = yield* commands.takeOf(circuit)
        const idleExecuted = yield* executed(server)
        yield* resetCounts
        const from = fleet.events.length
        // every member succeeds every 10 ms, open loop: 5,000 calls a second for the fleet
        yield* fleet.send({ op: "load", circuit, millis: 3_000, everyMillis: 10, failing: 0, openLoop: true })
        const busy = yield* commands.takeOf(circuit)
        const busyExecuted = yield* executed(server)
        const calls = of(fleet.events.slice(from), "loaded", circuit).reduce((n, e) => n + e.calls, 0)
        yield* log(
          `closed successes: ${calls} calls; round trips idle ${JSON.stringify(idle)}, busy ${JSON.stringify(busy)}; executed idle ${JSON.stringify(idleExecuted)}, busy ${JSON.stringify(busyExecuted)}`
        )
        assert.isAbove(calls, 10_000)
        // Nothing beyond the baseline: no command the idle fleet does not send, and of those no more
        // than one each per member (a heartbeat falling either side of the window's edges).
        for (const [name, count] of Object.entries(busy)) {
          assert.isAtMost(count, (idle[name] ?? 0) + (idle[name] === undefined ? 0 : fleet.size), `${name}: ${count}`)
        }
      }),
    120_000
  )
})
