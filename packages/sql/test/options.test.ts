import * as Edition from "@circuitry/core/Edition"
import { SqlBreakerStore } from "@circuitry/sql"
import { assert, describe, it } from "@circuitry/testkit"
import { Effect, Exit, Layer, Option } from "effect"

const failure = <A, E>(layer: Layer.Layer<A, E>) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(Effect.scoped(Layer.build(layer)))
    assert.isTrue(Exit.isFailure(exit))
    if (Exit.isSuccess(exit)) return undefined as never
    const error = Option.getOrUndefined(Edition.findError(exit.cause))
    assert.instanceOf(error, SqlBreakerStore.InvalidSqlOptions)
    assert.strictEqual((error as SqlBreakerStore.InvalidSqlOptions)._tag, "InvalidSqlOptions")
    return (error as SqlBreakerStore.InvalidSqlOptions).message
  })

describe("options are validated into a typed error that says what is wrong", () => {
  it("the package's one options error is InvalidSqlOptions; the former name is the same class", () => {
    const error = new SqlBreakerStore.InvalidSqlOptions({ message: "m" })
    assert.strictEqual(error._tag, "InvalidSqlOptions")
    assert.strictEqual(SqlBreakerStore.InvalidStoreOptions, SqlBreakerStore.InvalidSqlOptions)
  })

  it.effect("table must be an identifier", () =>
    Effect.gen(function* () {
      const message = yield* failure(
        SqlBreakerStore.layerSqlite({ filename: ":memory:" }, { table: "x; DROP TABLE y" })
      )
      assert.include(message, "table must be a SQL identifier")
      assert.include(message, "x; DROP TABLE y")
      const tooDeep = yield* failure(SqlBreakerStore.layerSqlite({ filename: ":memory:" }, { table: "a.b.c" }))
      assert.include(tooDeep, "table")
    })
  )

  it.effect("pollInterval must be a finite duration > 0", () =>
    Effect.gen(function* () {
      const message = yield* failure(SqlBreakerStore.layerSqlite({ filename: ":memory:" }, { pollInterval: 0 }))
      assert.include(message, "pollInterval must be a finite duration > 0")
      assert.include(
        yield* failure(SqlBreakerStore.layerSqlite({ filename: ":memory:" }, { pollInterval: "forever" as never })),
        "pollInterval"
      )
    })
  )

  it.effect("filename and busyTimeout", () =>
    Effect.gen(function* () {
      assert.include(yield* failure(SqlBreakerStore.layerSqlite({ filename: "" })), "filename must be a non-empty path")
      assert.include(
        yield* failure(SqlBreakerStore.layerSqlite({ filename: ":memory:", busyTimeout: -1 })),
        "busyTimeout must be a finite duration >= 0"
      )
    })
  )

  it.effect("readonly and prepareCacheSize", () =>
    Effect.gen(function* () {
      assert.include(
        yield* failure(SqlBreakerStore.layerSqlite({ filename: ":memory:", readonly: true })),
        "readonly must be false: a store writes"
      )
      assert.include(
        yield* failure(SqlBreakerStore.layerSqlite({ filename: ":memory:", prepareCacheSize: -1 })),
        "prepareCacheSize must be an integer >= 0"
      )
    })
  )

  it.effect("a valid configuration builds (an in-memory SQLite database)", () =>
    Effect.gen(function* () {
      const table = yield* Edition.service(SqlBreakerStore.SqlBreakerStore).pipe(
        Effect.map((store) => store.table),
        Effect.provide(SqlBreakerStore.layerSqlite({ filename: ":memory:" }, { table: "ops_breakers" }))
      )
      assert.strictEqual(table, "ops_breakers")
    })
  )
})
