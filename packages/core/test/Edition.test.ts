// The edition layer, on whichever major this run is: the same assertions hold on Effect 3 and 4.
import { Edition } from "@circuitry/core"
import { assert, describe, it } from "@effect/vitest"
import {
  Cause,
  Clock,
  Context,
  Deferred,
  Duration,
  Effect,
  Exit,
  Fiber,
  Layer,
  Option,
  PubSub,
  Queue,
  Schedule,
  Schema
} from "effect"
import effect from "effect/package.json" with { type: "json" }

describe("Edition", () => {
  it("is the edition of the effect it runs on", () => {
    assert.strictEqual(Edition.major, Number.parseInt(effect.version))
  })

  it("reads durations as the major's DurationInput does", () => {
    assert.deepStrictEqual(Option.map(Edition.durationFromUnknown("2 seconds"), Duration.toMillis), Option.some(2000))
    assert.deepStrictEqual(Option.map(Edition.durationFromUnknown(15), Duration.toMillis), Option.some(15))
    assert.isTrue(Option.isNone(Edition.durationFromUnknown("soon")))
    assert.isTrue(Option.isNone(Edition.durationFromUnknown(true)))
    assert.isTrue(Option.isNone(Edition.durationFromUnknown(null)))
  })

  it.effect("steps a schedule as Effect.retry does: each delay, then done", () =>
    Effect.gen(function* () {
      const spaced = yield* Edition.stepper(Schedule.spaced("100 millis"))
      assert.strictEqual(yield* spaced(0, "e"), 100)
      assert.strictEqual(yield* spaced(100, "e"), 100)
      const twice = yield* Edition.stepper(Schedule.recurs(2))
      assert.strictEqual(yield* twice(0, "e"), 0)
      assert.strictEqual(yield* twice(0, "e"), 0)
      assert.isUndefined(yield* twice(0, "e"))
    })
  )

  it.effect("forks into the caller's context, interruptible, at once", () =>
    Effect.gen(function* () {
      class Greeting extends Edition.KeyClass<Greeting, string>()("Greeting") {}
      const fiber = yield* Edition.withCaller<Edition.Fiber<string, never>, never, Greeting>((caller) => {
        const fiber = caller.fork(Effect.map(Greeting, (g) => `${g}, world`))
        return Effect.succeed(fiber)
      }).pipe(Effect.provideService(Greeting, "hello"))
      assert.strictEqual(yield* Fiber.join(fiber), "hello, world")

      const hung = yield* Edition.withCaller<Edition.Fiber<never, never>, never, never>((caller) =>
        Effect.succeed(caller.fork(Effect.never))
      ).pipe(Effect.uninterruptible)
      const exit = yield* Fiber.interrupt(hung).pipe(Effect.andThen(Fiber.await(hung)))
      assert.isTrue(Exit.isFailure(exit) && Edition.hasInterruptsOnly(exit.cause) && Edition.hasInterrupts(exit.cause))
    })
  )

  it.effect("callback resumes with the result it is given", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* Edition.callback<number, never>((resume) => resume(Effect.succeed(1))), 1)
      const error = yield* Effect.flip(Edition.callback<never, string>((resume) => resume(Effect.fail("no"))))
      assert.strictEqual(error, "no")
    })
  )

  it.effect("catchFailure sees failures, not defects", () =>
    Effect.gen(function* () {
      assert.strictEqual(
        yield* Edition.catchFailure(Effect.fail("e"), (e) => Effect.succeed(`caught ${e}`)),
        "caught e"
      )
      const exit = yield* Effect.exit(Edition.catchFailure(Effect.die("boom"), () => Effect.succeed("caught")))
      assert.isTrue(Exit.isFailure(exit) && Option.isNone(Edition.findError(exit.cause)))
      assert.isFalse(Exit.isFailure(exit) && Edition.hasInterruptsOnly(exit.cause))
    })
  )

  it("reads causes", () => {
    assert.deepStrictEqual(Edition.findError(Cause.fail("e")), Option.some("e"))
    assert.isFalse(Edition.hasInterrupts(Cause.fail("e")))
  })

  it.effect("forkChild forks a fiber to join", () =>
    Effect.gen(function* () {
      const fiber = yield* Edition.forkChild(Effect.succeed(7))
      assert.strictEqual(yield* Fiber.join(fiber), 7)
    })
  )

  it.effect("offers to a queue synchronously", () =>
    Effect.gen(function* () {
      const queue = yield* Queue.sliding<number>(1)
      assert.isTrue(Edition.offerUnsafe(queue, 1))
      assert.strictEqual(yield* Queue.take(queue), 1)
    })
  )

  it.effect("a scoped layer of a key", () =>
    Effect.gen(function* () {
      class Name extends Edition.KeyClass<Name, string>()("Name") {}
      assert.isTrue(Edition.isKey(Name))
      assert.isFalse(Edition.isKey({}))
      const name = yield* Effect.provide(Name, Edition.layerScoped(Name, Effect.succeed("n")))
      assert.strictEqual(name, "n")
      assert.isTrue(Layer.isLayer(Edition.layerScoped(Name, Effect.succeed("n"))))
    })
  )
})

describe("Edition (chaos)", () => {
  it.effect("yieldNow lets a forked fiber run first", () =>
    Effect.gen(function* () {
      const seen: Array<string> = []
      yield* Edition.forkChild(Effect.sync(() => seen.push("child")))
      yield* Edition.yieldNow
      seen.push("parent")
      assert.deepStrictEqual(seen, ["child", "parent"])
    })
  )

  it("literals: a schema of one of the values, for a field of an error", () => {
    class E extends Schema.TaggedError<E>()("E", { figure: Edition.literals(["a", "b"]) }) {}
    const figure: "a" | "b" = new E({ figure: "b" }).figure
    assert.strictEqual(figure, "b")
    const is = Schema.is(Edition.literals(["a", "b"]))
    assert.deepStrictEqual([is("a"), is("b"), is("c"), is(1)], [true, true, false, false])
  })
})

describe("Edition (for the limiter)", () => {
  it.effect("key: a service key from its id, provided and read as any key", () =>
    Effect.gen(function* () {
      interface Counter {
        readonly count: number
      }
      const Counter = Edition.key<Counter>("test/Counter")
      assert.isTrue(Edition.isKey(Counter))
      const counter = yield* Effect.provideService(Edition.service(Counter), Counter, { count: 3 })
      assert.strictEqual(counter.count, 3)
    })
  )

  it.effect("publishUnsafe publishes to a pubsub from synchronous code; false once it is shut down", () =>
    Effect.gen(function* () {
      const pubsub = yield* PubSub.unbounded<number>()
      assert.isTrue(Edition.publishUnsafe(pubsub, 7))
      yield* PubSub.shutdown(pubsub)
      assert.isFalse(Edition.publishUnsafe(pubsub, 8))
    })
  )

  it("literals: a schema of one of the given strings", () => {
    const reason = Edition.literals(["standing", "overdue"])
    assert.isTrue(Schema.is(reason)("overdue"))
    assert.isFalse(Schema.is(reason)("other"))
  })

  it.effect("failures, defects and isTimeoutError read a cause as each major builds it", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Effect.fail("a"))
      assert.isTrue(Exit.isFailure(exit))
      if (Exit.isFailure(exit)) assert.deepStrictEqual(Edition.failures(exit.cause), ["a"])
      assert.deepStrictEqual(Edition.defects(Cause.fail("a")), [])
      assert.deepStrictEqual(Edition.defects(Cause.die("boom")), ["boom"])
      assert.deepStrictEqual(Edition.failures(Cause.die("boom")), [])
      const timedOut = yield* Effect.flip(Effect.timeout(Effect.never, 0))
      assert.isTrue(Edition.isTimeoutError(timedOut))
      assert.isFalse(Edition.isTimeoutError(new Error("timeout")))
    })
  )
})

describe("Edition (results, fibers, pubsub, deferreds; added for the breaker)", () => {
  it("a Result is built, told apart and read under Effect 4's names", () => {
    const ok: Edition.Result<number, string> = Edition.Result.succeed(1)
    const ko: Edition.Result<number, string> = Edition.Result.fail("e")
    assert.isTrue(Edition.Result.isSuccess(ok) && Edition.Result.successOf(ok) === 1)
    assert.isTrue(Edition.Result.isFailure(ko) && Edition.Result.failureOf(ko) === "e")
    assert.strictEqual(
      Edition.Result.match(
        Edition.Result.mapError(ko, (e) => `${e}!`),
        { onFailure: (e) => e, onSuccess: String }
      ),
      "e!"
    )
    assert.strictEqual(Edition.Result.getOrThrow(Edition.Result.map(ok, (n) => n + 1)), 2)
    assert.isUndefined(Edition.Result.getOrUndefined(ko))
  })

  it.effect("fromResult and result go between results and effects", () =>
    Effect.gen(function* () {
      assert.strictEqual(yield* Edition.fromResult(Edition.Result.succeed(3)), 3)
      assert.strictEqual(yield* Effect.flip(Edition.fromResult(Edition.Result.fail("e"))), "e")
      const r = yield* Edition.result(Effect.fail("e"))
      assert.isTrue(Edition.Result.isFailure(r) && Edition.Result.failureOf(r) === "e")
    })
  )

  it.effect("catchCause recovers from a defect", () =>
    Effect.gen(function* () {
      const caught = yield* Edition.catchCause(Effect.die("boom"), (cause) =>
        Effect.succeed(!Edition.hasInterrupts(cause) && Option.isNone(Edition.findError(cause)))
      )
      assert.isTrue(caught)
    })
  )

  it.effect("forkDetach forks a fiber to join", () =>
    Effect.gen(function* () {
      const fiber = yield* Edition.forkDetach(Effect.succeed(7))
      assert.strictEqual(yield* Fiber.join(fiber), 7)
    })
  )

  it.effect("disconnect: an interrupted caller does not wait for the effect's cleanup", () =>
    Effect.gen(function* () {
      const cleaned = yield* Deferred.make<void>()
      const started = yield* Deferred.make<void>()
      const slowCleanup = Effect.onInterrupt(Effect.andThen(Deferred.succeed(started, undefined), Effect.never), () =>
        Deferred.await(cleaned)
      )
      const fiber = yield* Edition.forkChild(Edition.disconnect(slowCleanup))
      yield* Deferred.await(started)
      // The caller's interruption returns while the cleanup still waits on `cleaned`.
      yield* Fiber.interrupt(fiber)
      assert.isFalse(yield* Deferred.isDone(cleaned))
      yield* Deferred.succeed(cleaned, undefined)
      assert.strictEqual(yield* Edition.disconnect(Effect.succeed(1)), 1)
    })
  )

  it.effect("publishes to a pubsub synchronously", () =>
    Effect.gen(function* () {
      const pubsub = yield* PubSub.unbounded<number>()
      const subscription: Edition.Subscription<number> = yield* PubSub.subscribe(pubsub)
      assert.isDefined(subscription)
      assert.isTrue(Edition.publishUnsafe(pubsub, 1))
      assert.strictEqual(yield* PubSub.size(pubsub), 1)
    }).pipe(Effect.scoped)
  )

  it.effect("a deferred made and completed synchronously", () =>
    Effect.gen(function* () {
      const deferred = Edition.deferredUnsafe<number>()
      Edition.completeUnsafe(deferred, Exit.succeed(5))
      assert.strictEqual(yield* Deferred.await(deferred), 5)
    })
  )

  it.effect("a semaphore and a timeout error", () =>
    Effect.gen(function* () {
      const semaphore = yield* Edition.makeSemaphore(1)
      assert.strictEqual(yield* semaphore.withPermits(1)(Effect.succeed(2)), 2)
      assert.instanceOf(Edition.timeoutError(), Error)
    })
  )
})

describe("Edition: layers of several services", () => {
  it.effect("a layer of the context a scoped effect builds, released with the layer", () =>
    Effect.gen(function* () {
      class Name extends Edition.KeyClass<Name, string>()("Name") {}
      class Size extends Edition.KeyClass<Size, number>()("Size") {}
      let released = false
      const layer = Edition.layerScopedContext(
        Effect.gen(function* () {
          yield* Effect.addFinalizer(() =>
            Effect.sync(() => {
              released = true
            })
          )
          return Context.add(Context.make(Name, "n"), Size, 2)
        })
      )
      const both = yield* Effect.provide(Effect.all([Edition.service(Name), Edition.service(Size)]), layer)
      assert.deepStrictEqual(both, ["n", 2])
      assert.isTrue(released)
    })
  )
})

describe("Edition: defects", () => {
  it.effect("a defect with a message: no failure, and the message in the squashed cause", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Edition.dieMessage("ttl must be a duration"))
      assert.isTrue(Exit.isFailure(exit) && Option.isNone(Edition.findError(exit.cause)))
      if (Exit.isFailure(exit)) assert.include(String(Cause.squash(exit.cause)), "ttl must be a duration")
    })
  )
})

describe("Edition (sql)", () => {
  it.effect("pollUnsafe: undefined while a fiber runs, its exit once it has ended", () =>
    Effect.gen(function* () {
      const gate = yield* Queue.unbounded<void>()
      const fiber = yield* Edition.forkChild(Effect.as(Queue.take(gate), 3))
      assert.isUndefined(Edition.pollUnsafe(fiber))
      yield* Queue.offer(gate, undefined)
      yield* Fiber.await(fiber)
      assert.deepStrictEqual(Edition.pollUnsafe(fiber), Exit.succeed(3))
    })
  )

  it.effect("layerScopedContext: several services from one scoped effect, released with the layer", () =>
    Effect.gen(function* () {
      class A extends Edition.KeyClass<A, string>()("A") {}
      class B extends Edition.KeyClass<B, number>()("B") {}
      const released: Array<string> = []
      const layer = Edition.layerScopedContext(
        Effect.andThen(
          Effect.acquireRelease(Effect.void, () => Effect.sync(() => released.push("ab"))),
          Layer.build(Layer.merge(Layer.succeed(A, "a"), Layer.succeed(B, 1)))
        )
      )
      const [a, b] = yield* Effect.scoped(Effect.provide(Effect.all([Edition.service(A), Edition.service(B)]), layer))
      assert.deepStrictEqual([a, b, released], ["a", 1, ["ab"]])
    })
  )

  it("refine: the predicate's message for a value it rejects", () => {
    const Even = Edition.refine(Schema.Number, (n) => n % 2 === 0, "an even number")
    assert.isTrue(Schema.is(Even)(2))
    assert.isFalse(Schema.is(Even)(3))
    assert.throws(() => Schema.decodeUnknownSync(Schema.Struct({ n: Even }))({ n: 3 }), /an even number/)
  })
})

describe("Edition (sql's listener)", () => {
  it.effect("withLiveClock: the live clock under a TestClock, the TestClock again outside", () =>
    Effect.gen(function* () {
      const before = Date.now()
      const live = yield* Edition.withLiveClock(Clock.currentTimeMillis)
      assert.isAtLeast(live, before)
      assert.strictEqual(yield* Clock.currentTimeMillis, 0)
      // A sleep on the live clock ends without TestClock.adjust.
      yield* Edition.withLiveClock(Effect.sleep(1))
      assert.strictEqual(yield* Clock.currentTimeMillis, 0)
    })
  )
})
