// Scopes, scoped streams and subscriptions through the edition layer: the same assertions on both majors.
import { Edition } from "@circuitry/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, PubSub, Scope, Stream } from "effect"

const released = (log: Array<string>, name: string) =>
  Effect.acquireRelease(Effect.succeed(name), () => Effect.sync(() => log.push(name)))

describe("Edition (scopes)", () => {
  it.effect("forkScope: a child closed with its parent, its finalizers run one after another, last first", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const parent = yield* Scope.make()
      const child: Edition.Closeable = yield* Edition.forkScope(parent)
      yield* Edition.inScope(released(log, "first"), child)
      yield* Edition.inScope(released(log, "second"), child)
      assert.deepStrictEqual(log, [])
      yield* Scope.close(parent, Exit.void)
      assert.deepStrictEqual(log, ["second", "first"])
    })
  )

  it.effect("inScope, data first and last: the effect's resources live as long as the scope, not the call", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const scope = yield* Scope.make()
      assert.strictEqual(yield* Edition.inScope(released(log, "a"), scope), "a")
      assert.strictEqual(yield* released(log, "b").pipe(Edition.inScope(scope)), "b")
      assert.deepStrictEqual(log, [])
      yield* Scope.close(scope, Exit.void)
      assert.deepStrictEqual(log, ["b", "a"])
    })
  )

  it.effect("unwrapScoped: the stream's scoped resource is released when the stream ends, not before", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const stream = Edition.unwrapScoped(
        Effect.map(released(log, "resource"), (name) =>
          Stream.mapEffect(Stream.make(1, 2), (n) => Effect.sync(() => `${name} ${n} (${log.length} released)`))
        )
      )
      const items = Array.from(yield* Stream.runCollect(stream))
      assert.deepStrictEqual(items, ["resource 1 (0 released)", "resource 2 (0 released)"])
      assert.deepStrictEqual(log, ["resource"])
    })
  )

  it.effect("take: the next item of a subscription, waiting for one", () =>
    Effect.gen(function* () {
      const pubsub = yield* PubSub.unbounded<number>()
      const subscription: Edition.Subscription<number> = yield* PubSub.subscribe(pubsub)
      yield* PubSub.publish(pubsub, 1)
      yield* PubSub.publish(pubsub, 2)
      assert.strictEqual(yield* Edition.take(subscription), 1)
      assert.strictEqual(yield* Edition.take(subscription), 2)
      const waiting = yield* Edition.forkChild(Edition.take(subscription))
      yield* Edition.yieldNow
      assert.isUndefined(Edition.pollUnsafe(waiting))
      yield* PubSub.publish(pubsub, 3)
      assert.strictEqual(yield* Fiber.join(waiting), 3)
    }).pipe(Effect.scoped)
  )
})
