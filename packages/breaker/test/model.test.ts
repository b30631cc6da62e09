/**
 * A model-based property test: random interleavings of calls (successes, failures, slow calls,
 * repairs), concurrent probes (slow ones, and ones past their timeout), interruptions, clock moves,
 * isolate and reset, checked step by step against a small reference model of the state machine
 * written from the contract in API.md.
 * Over 350 lines because the commands, the model and the runner are read together.
 */
import * as Edition from "@circuitry/core/Edition"
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { describe, drain, expect, it, poll, runTest, TestClock, yieldNow } from "@circuitry/testkit"
import { Cause, Deferred, Effect, Exit, Fiber, Option, Schedule } from "effect"
import * as fc from "fast-check"
import { timeoutFor } from "../../../test-support/calibrate.js"

// ---------------------------------------------------------------------------------------------
// configuration and commands
// ---------------------------------------------------------------------------------------------

type PolicyConfig =
  | { readonly _tag: "Consecutive"; readonly threshold: number }
  | {
      readonly _tag: "Rate"
      readonly window:
        { readonly _tag: "Count"; readonly size: number } | { readonly _tag: "Time"; readonly millis: number }
      readonly threshold: number
      readonly minimumCalls: number
      readonly slow: { readonly millis: number; readonly threshold: number } | undefined
    }

interface Config {
  readonly policy: PolicyConfig
  readonly openFor:
    { readonly _tag: "Fixed"; readonly millis: number } | { readonly _tag: "Exponential"; readonly base: number }
  readonly permits: number
  readonly successesToClose: number
}

type Command =
  | { readonly _tag: "Start"; readonly outcome: "ok" | "fail"; readonly repair: boolean; readonly count: number }
  | { readonly _tag: "Call"; readonly outcome: "ok" | "fail"; readonly repair: boolean }
  | { readonly _tag: "Finish"; readonly pick: number }
  | { readonly _tag: "Interrupt"; readonly pick: number }
  | { readonly _tag: "Advance"; readonly millis: number }
  | { readonly _tag: "Isolate" }
  | { readonly _tag: "Reset" }

const policyArb: fc.Arbitrary<PolicyConfig> = fc.oneof(
  fc.record({ _tag: fc.constant("Consecutive" as const), threshold: fc.integer({ min: 1, max: 3 }) }),
  fc
    .record({
      window: fc.oneof(
        fc.record({ _tag: fc.constant("Count" as const), size: fc.integer({ min: 1, max: 6 }) }),
        fc.record({ _tag: fc.constant("Time" as const), millis: fc.constantFrom(2_000, 10_000, 45) })
      ),
      threshold: fc.constantFrom(0.25, 0.5, 1),
      minimumCalls: fc.integer({ min: 1, max: 3 }),
      slow: fc.option(fc.record({ millis: fc.constantFrom(500, 2_000), threshold: fc.constantFrom(0.5, 1) }), {
        nil: undefined
      })
    })
    .map((r) => ({
      _tag: "Rate" as const,
      ...r,
      minimumCalls: r.window._tag === "Count" ? Math.min(r.minimumCalls, r.window.size) : r.minimumCalls
    }))
)

const configArb: fc.Arbitrary<Config> = fc.record({
  policy: policyArb,
  openFor: fc.oneof(
    fc.record({ _tag: fc.constant("Fixed" as const), millis: fc.constantFrom(1_000, 5_000) }),
    fc.record({ _tag: fc.constant("Exponential" as const), base: fc.constantFrom(500, 1_000) })
  ),
  permits: fc.integer({ min: 1, max: 3 }),
  successesToClose: fc.integer({ min: 1, max: 2 })
})

// Weighted towards failures, clock moves that cross an open episode's end, and bursts of calls, so
// that most runs reach HalfOpen with every permit taken, repairs, reopenings and closings.
const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.record({
      _tag: fc.constant("Call" as const),
      outcome: fc.constantFrom("ok" as const, "fail" as const, "fail" as const),
      repair: fc.boolean()
    })
  },
  {
    weight: 15,
    arbitrary: fc.record({
      _tag: fc.constant("Start" as const),
      outcome: fc.constantFrom("ok" as const, "fail" as const, "fail" as const),
      repair: fc.boolean(),
      count: fc.oneof(
        { weight: 3, arbitrary: fc.constant(1) },
        { weight: 1, arbitrary: fc.integer({ min: 2, max: 4 }) }
      )
    })
  },
  { weight: 15, arbitrary: fc.record({ _tag: fc.constant("Finish" as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("Interrupt" as const), pick: fc.nat() }) },
  {
    weight: 20,
    arbitrary: fc.record({
      _tag: fc.constant("Advance" as const),
      millis: fc.constantFrom(0, 1, 100, 600, 999, 1_000, 1_000, 1_001, 2_500, 5_000, 5_000, 30_000)
    })
  },
  { weight: 1, arbitrary: fc.constant({ _tag: "Isolate" as const }) },
  { weight: 2, arbitrary: fc.constant({ _tag: "Reset" as const }) }
)

// ---------------------------------------------------------------------------------------------
// the reference model
// ---------------------------------------------------------------------------------------------

type Tag = CircuitBreaker.StateTag
type Kind = "run" | "probe" | "repair" | "rejected"

class Model {
  tag: Tag = "Closed"
  until = 0
  episode = 0
  probes = 0
  probeSuccesses = 0
  repairFailed = false
  repairProven = false
  repairs = 0
  openSteps = 0
  /** The wait of the latest open episode: a probe's default timeout (at least 1 s). */
  lastDelay = 0
  /** Probes holding a permit: when each one's timeout ends it, and its episode. */
  live = new Map<number, { readonly deadline: number; readonly episode: number }>()
  probeSeq = 0
  window: Array<{ failure: boolean; slow: boolean; at: number }> = []
  transitions: Array<string> = []

  constructor(readonly config: Config) {}

  private go(to: Tag, at: number) {
    this.transitions.push(`${this.tag}->${to}@${at}`)
    this.tag = to
    this.episode++
    this.probeSuccesses = 0
    this.repairFailed = false
    this.repairProven = false
    this.repairs = 0
    this.window = []
  }

  sync(now: number) {
    if (this.tag === "Open" && now >= this.until) this.go("HalfOpen", this.until)
  }

  private open(now: number) {
    const o = this.config.openFor
    const delay = o._tag === "Fixed" ? o.millis : o.base * 2 ** this.openSteps++
    this.lastDelay = delay
    this.until = now + delay
    this.go("Open", now)
  }

  private close(now: number) {
    this.openSteps = 0
    if (this.tag === "Closed") {
      this.episode++
      this.window = []
    } else {
      this.go("Closed", now)
    }
  }

  admit(now: number, repair: boolean): Kind {
    this.sync(now)
    if (this.tag === "Closed") return "run"
    if (this.tag === "HalfOpen") {
      if (this.probes < this.config.permits) {
        this.probes++
        this.live.set(++this.probeSeq, { deadline: now + Math.max(1_000, this.lastDelay), episode: this.episode })
        return "probe"
      }
      return "rejected"
    }
    if (this.tag === "Open" && repair && !this.repairFailed && (this.repairProven || this.repairs === 0)) {
      this.repairs++
      return "repair"
    }
    return "rejected"
  }

  private trips(now: number): boolean {
    const p = this.config.policy
    if (p._tag === "Consecutive") {
      let run = 0
      for (let i = this.window.length - 1; i >= 0 && this.window[i]!.failure; i--) run++
      return run >= p.threshold
    }
    let entries = this.window
    if (p.window._tag === "Count") {
      entries = entries.slice(-p.window.size)
    } else {
      const width = Math.max(1, Math.ceil(p.window.millis / 20))
      const buckets = Math.max(1, Math.ceil(p.window.millis / width))
      entries = entries.filter((e) => Math.floor(e.at / width) > Math.floor(now / width) - buckets)
    }
    const calls = entries.length
    if (calls < p.minimumCalls) return false
    const failures = entries.filter((e) => e.failure).length
    const slow = entries.filter((e) => e.slow).length
    return failures / calls >= p.threshold || (p.slow !== undefined && slow / calls >= p.slow.threshold)
  }

  /** The clock moves to `to`: probes still running at their timeout fail there and then. */
  advance(to: number) {
    for (;;) {
      let next: [number, { readonly deadline: number; readonly episode: number }] | undefined
      for (const entry of this.live)
        if (entry[1].deadline <= to && (next === undefined || entry[1].deadline < next[1].deadline)) next = entry
      if (next === undefined) return
      this.live.delete(next[0])
      this.probes--
      if (next[1].episode === this.episode && this.tag === "HalfOpen") this.open(next[1].deadline)
    }
  }

  finish(kind: Kind, episode: number, failure: boolean, now: number, duration: number, probe: number) {
    this.sync(now)
    if (kind === "run") {
      if (episode !== this.episode || this.tag !== "Closed") return
      const p = this.config.policy
      const slow = p._tag === "Rate" && p.slow !== undefined && duration > p.slow.millis
      this.window.push({ failure, slow, at: now })
      if (this.trips(now)) this.open(now)
    } else if (kind === "probe") {
      if (!this.live.delete(probe)) return // its timeout ended it: the late outcome is ignored
      this.probes--
      if (episode !== this.episode || this.tag !== "HalfOpen") return
      // with a slow-call rule, a slow probe is a failed probe
      const p = this.config.policy
      const slow = p._tag === "Rate" && p.slow !== undefined && duration > p.slow.millis
      if (failure || slow) this.open(now)
      else if (++this.probeSuccesses >= this.config.successesToClose) this.close(now)
    } else if (kind === "repair") {
      if (episode !== this.episode || this.tag !== "Open") return
      this.repairs--
      if (failure) this.repairFailed = true
      else this.repairProven = true
    }
  }

  interrupt(kind: Kind, episode: number, probe: number) {
    if (kind === "probe" && this.live.delete(probe)) this.probes--
    if (kind === "repair" && episode === this.episode && this.tag === "Open") this.repairs--
  }

  isolate(now: number) {
    this.sync(now)
    if (this.tag !== "Isolated") this.go("Isolated", now)
  }

  reset(now: number) {
    this.sync(now)
    this.close(now)
  }
}

// ---------------------------------------------------------------------------------------------
// running a scenario against the real breaker
// ---------------------------------------------------------------------------------------------

const toOptions = (config: Config): CircuitBreaker.Options => {
  const p = config.policy
  return {
    name: "model",
    policy:
      p._tag === "Consecutive"
        ? Policy.consecutiveFailures(p.threshold)
        : Policy.failureRate({
            threshold: p.threshold,
            minimumCalls: p.minimumCalls,
            window: p.window._tag === "Count" ? Policy.countWindow(p.window.size) : Policy.timeWindow(p.window.millis),
            slowCall: p.slow === undefined ? undefined : { duration: p.slow.millis, threshold: p.slow.threshold }
          }),
    openFor: config.openFor._tag === "Fixed" ? config.openFor.millis : Schedule.exponential(config.openFor.base),
    halfOpen: { permits: config.permits, successesToClose: config.successesToClose }
  }
}

interface InFlight {
  readonly kind: Kind
  readonly episode: number
  readonly startedAt: number
  /** The model's id of a probe. */
  readonly probe: number
  readonly outcome: "ok" | "fail"
  readonly gate: Deferred.Deferred<void>
  readonly fiber: Edition.Fiber<unknown, unknown>
}

const scenario = (config: Config, commands: ReadonlyArray<Command>) =>
  Effect.gen(function* () {
    const breaker = yield* CircuitBreaker.make(toOptions(config))
    const transitions = yield* breaker.subscribe
    const model = new Model(config)
    const inFlight: Array<InFlight> = []
    let lastStarted: InFlight | undefined
    let now = 0
    const step = (i: number, what: string) => `step ${i} (${what})`

    // A "Call" is a call that starts and ends at the same instant: a Start, then a Finish of it.
    const steps = commands.flatMap((c): ReadonlyArray<Command> =>
      c._tag === "Call"
        ? [
            { _tag: "Start", outcome: c.outcome, repair: c.repair, count: 1 },
            { _tag: "Finish", pick: -1 }
          ]
        : [c]
    )
    for (let i = 0; i < steps.length; i++) {
      const command = steps[i]!
      const where = step(i, JSON.stringify(command))
      switch (command._tag) {
        case "Start": {
          lastStarted = undefined
          for (let n = 0; n < command.count; n++) {
            const gate = yield* Deferred.make<void>()
            let started = false
            const dependency = Effect.suspend(() => {
              started = true
              return Deferred.await(gate)
            }).pipe(Effect.andThen(command.outcome === "ok" ? Effect.succeed("ok") : Effect.fail("boom")))
            const guarded = CircuitBreaker.withBreaker(dependency, breaker)
            const fiber = yield* Edition.forkChild(command.repair ? CircuitBreaker.repairing(guarded) : guarded)
            let exit = yield* poll(fiber)
            for (let spin = 0; spin < 50 && !started && Option.isNone(exit); spin++) {
              yield* yieldNow
              exit = yield* poll(fiber)
            }
            const kind = model.admit(now, command.repair)
            if (kind === "rejected") {
              expect(started, where).toBe(false)
              expect(Option.isSome(exit), where).toBe(true)
              const cause = Option.isSome(exit) && Exit.isFailure(exit.value) ? exit.value.cause : Cause.empty
              const failure = Option.getOrUndefined(Edition.findError(cause))
              expect(failure, where).toBeInstanceOf(CircuitBreaker.BreakerOpenError)
              if (!(failure instanceof CircuitBreaker.BreakerOpenError)) continue
              expect(failure?.state, where).toBe(model.tag)
              expect(failure?.retryAfterMillis, where).toBe(model.tag === "Open" ? model.until - now : 0)
            } else {
              expect(started, where).toBe(true)
              lastStarted = {
                kind,
                episode: model.episode,
                startedAt: now,
                probe: model.probeSeq,
                outcome: command.outcome,
                gate,
                fiber
              }
              inFlight.push(lastStarted)
            }
          }
          break
        }
        case "Finish":
        case "Interrupt": {
          if (inFlight.length === 0) break
          // pick -1 finishes the call the step before started, if it was admitted.
          const index =
            command.pick === -1 ? inFlight.findIndex((c) => c === lastStarted) : command.pick % inFlight.length
          if (index === -1) break
          const [call] = inFlight.splice(index, 1)
          if (command._tag === "Finish") {
            yield* Deferred.succeed(call!.gate, undefined)
            yield* Fiber.await(call!.fiber)
            model.finish(call!.kind, call!.episode, call!.outcome === "fail", now, now - call!.startedAt, call!.probe)
          } else {
            yield* Fiber.interrupt(call!.fiber)
            model.interrupt(call!.kind, call!.episode, call!.probe)
          }
          break
        }
        case "Call":
          break
        case "Advance":
          yield* TestClock.adjust(command.millis)
          now += command.millis
          model.advance(now)
          break
        case "Isolate":
          yield* breaker.isolate
          model.isolate(now)
          break
        case "Reset":
          yield* breaker.reset
          model.reset(now)
          break
      }
      // After every step: the same state, and the same transitions announced in the same order.
      const state = yield* breaker.state
      model.sync(now)
      expect(state._tag, where).toBe(model.tag)
      if (state._tag === "Open") expect(state.until, where).toBe(model.until)
      const announced = Array.from(yield* drain(transitions), (t) => `${t.from}->${t.to}@${t.at}`)
      expect(announced, where).toEqual(model.transitions)
      model.transitions = []
      expect((yield* breaker.snapshot).probes, where).toBe(model.probes)
    }
    for (const call of inFlight) yield* Fiber.interrupt(call.fiber)
  })

// The seed is printed on every run, so that a failure can be replayed: MODEL_SEED=<seed> vitest run test/model.test.ts
// (fast-check's failure message also gives the shrunk counterexample and its path).
const seed = Number(process.env["MODEL_SEED"] ?? Date.now() % 2 ** 31)
const numRuns = Number(process.env["MODEL_RUNS"] ?? 1_000)

const property = fc.asyncProperty(
  configArb,
  fc.array(commandArb, { minLength: 1, maxLength: 60 }),
  (config, commands) => runTest(scenario(config, commands))
)

// Virtual time: only the CPU it takes depends on the machine. The timeout is relative to the first
// twentieth of the runs, timed on this machine as the file is collected (test-support/calibrate.ts).
const timeout = await timeoutFor(() => fc.assert(property, { numRuns: Math.ceil(numRuns / 20), seed }), 20)

describe("model", () => {
  it(`the breaker agrees with the reference model, step by step (${numRuns} runs)`, { timeout }, async () => {
    console.log(`model test: seed ${seed}, ${numRuns} runs (replay with MODEL_SEED=${seed})`)
    await fc.assert(property, { numRuns, seed })
  })
})
