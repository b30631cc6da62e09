/**
 * A first look: a breaker in front of a flaky dependency, in virtual time. Each transition is
 * printed as it happens; an hour of traffic replays in a blink because the clock is a TestClock.
 */
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { Console, Effect, Fiber, Schedule, Stream, TestClock, TestContext } from "effect"

const program = Effect.gen(function* () {
  const breaker = yield* CircuitBreaker.make({
    name: "flaky-dependency",
    policy: Policy.consecutiveFailures(3),
    openFor: Schedule.exponential("2 seconds")
  })
  const printer = yield* breaker.changes.pipe(
    Stream.runForEach((t) => Console.log(`  t=${(t.at / 1000).toFixed(1).padStart(5)} s  ${t.from} -> ${t.to}`)),
    Effect.fork
  )
  yield* Effect.yieldNow()
  // The dependency is down from t=10 s to t=25 s, and healthy otherwise.
  const dependency = Effect.clockWith((clock) => {
    const now = clock.unsafeCurrentTimeMillis()
    return now >= 10_000 && now < 25_000 ? Effect.fail("unavailable" as const) : Effect.succeed("ok" as const)
  })
  const tally = { ok: 0, failed: 0, rejected: 0 }
  for (let second = 0; second < 60 * 10; second++) {
    const result = yield* dependency.pipe(CircuitBreaker.withBreaker(breaker), Effect.either)
    if (result._tag === "Right") tally.ok++
    else if (result.left === "unavailable") tally.failed++
    else tally.rejected++
    yield* TestClock.adjust("100 millis")
  }
  yield* Effect.yieldNow()
  yield* Fiber.interrupt(printer)
  yield* Console.log(
    `\n  ${tally.ok} calls succeeded, ${tally.failed} reached the dead dependency, ${tally.rejected} were refused at once`
  )
})

console.log("circuitry: a breaker in front of a dependency that is down from t=10 s to t=25 s (10 calls/s)\n")
Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(TestContext.TestContext)))
