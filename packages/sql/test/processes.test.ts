import * as Edition from "@circuitry/core/Edition"
import { CircuitBreaker, Policy } from "@circuitry/breaker"
import { SqlBreakerStore } from "@circuitry/sql"
import { assert, describe, it, result, take } from "@circuitry/testkit"
import { Context, Effect, Option } from "effect"
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { backends, eventually, instance, row } from "./backends.js"

const here = path.dirname(fileURLToPath(import.meta.url))

/** Runs the member script in a child node process on the same file and parses what it printed. */
const member = (filename: string, table: string, name: string, action: "read" | "trip") =>
  Edition.callback<{ readonly pid: number; readonly state: string; readonly allowed: boolean }, Error>((resume) => {
    const child = execFile(
      process.execPath,
      ["--import", "tsx", path.join(here, "fixtures", "member.ts"), filename, table, name, action],
      // A child compiles the sources with tsx as it starts: 16 s of real time (2.6 s of CPU) at a
      // load average of 32 on this 2-core machine. The limits are for a hung child, not a slow one.
      { cwd: path.join(here, ".."), timeout: 120_000 },
      (error, stdout, stderr) => {
        if (error) return resume(Effect.fail(new Error(`member failed: ${error.message}\n${stderr}`)))
        resume(Effect.try(() => JSON.parse(stdout.trim().split("\n").pop()!)))
      }
    )
    return Effect.sync(() => child.kill())
  })

const sqlite = backends.find(([name]) => name === "sqlite")![1]

describe("two processes on one SQLite file", () => {
  // Real clocks: the other process reads the wall clock, so this test does too.
  it.live(
    "they agree on the verdict, whichever of them made it",
    () =>
      Effect.gen(function* () {
        const db = yield* sqlite
        const ctx = yield* instance(db)
        const options = { policy: Policy.consecutiveFailures(3), openFor: "1 hour" } as const
        // This process opens "inventory"; the other one, started afterwards, sees it open.
        const local = yield* CircuitBreaker.make({ ...options, name: "inventory" }).pipe(Effect.provide(ctx))
        yield* result(local.execute(Effect.fail("boom"))).pipe(Effect.repeat({ times: 2 }))
        yield* eventually(row(db, "inventory"), (r) => Option.isSome(r) && r.value.state === "Open")
        const seen = yield* member(db.filename, db.table, "inventory", "read")
        assert.notStrictEqual(seen.pid, process.pid)
        assert.deepStrictEqual({ state: seen.state, allowed: seen.allowed }, { state: "Open", allowed: false })

        // The other process opens "shipping"; this process's breaker, made before, follows it.
        const follower = yield* CircuitBreaker.make({ ...options, name: "shipping" }).pipe(Effect.provide(ctx))
        const changes = yield* follower.subscribe
        const tripped = yield* member(db.filename, db.table, "shipping", "trip")
        assert.strictEqual(tripped.state, "Open")
        yield* Context.get(ctx, SqlBreakerStore.SqlBreakerStore).poll
        const t = yield* take(changes)
        assert.deepStrictEqual([t.from, t.to], ["Closed", "Open"])
        assert.isFalse(yield* follower.isCallAllowed)
      }).pipe(Effect.scoped),
    300_000
  )
})
