/**
 * The Effect 4 edition as a user gets it. The ported packages' Effect 4 tarballs, as
 * `pnpm release:pack` writes them (packed once for both consumer tests: test/pack.setup.ts), are
 * installed with npm into apps on effect 4.1 under the OS temp folder, run it with plain `node` (the Node on the
 * PATH, 20 here) as ESM and as CommonJS, and typecheck a TypeScript consumer written in Effect 4's
 * idiom (Context.Service keys, Duration.Input) under node16 and bundler resolution, strict. An app
 * on effect 4 that installs the Effect 3 edition gets npm's peer error, not a broken runtime
 * (consumer.test.ts shows it, both ways, with the same tarballs).
 *
 * effect 4 is ESM only, and so is this edition: app.cjs `require`s it as it `require`s effect, by
 * Node's require(esm) (Node 20.19 and later).
 *
 * The ported packages are the ones editions/effect4/ported.ts lists, dependencies first.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ported } from "../../../editions/effect4/ported.js"
import { root } from "./packages.js"
import { tarballs, waitForPack } from "./packed.js"
import { run } from "./run.js"

const work = fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-edition4-"))
const app = path.join(work, "app")
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8"))

const effect4 = readJson(path.join(root, "editions", "effect4", "package.json")).devDependencies.effect as string
const rootManifest = readJson(path.join(root, "package.json"))
const names = ported.map((folder) => readJson(path.join(root, "packages", folder, "package.json")).name as string)
/** The Effect 4 edition's tarball of a ported package, as an npm dependency: its 0.M.P published as 4.M.P. */
const edition4Tarball = (name: string) => {
  const version = readJson(path.join(root, "packages", ported[names.indexOf(name)]!, "package.json")).version as string
  return `file:${path.join(tarballs, "effect4", `${name.slice(1).replace("/", "-")}-${version.replace(/^0\./, "4.")}.tgz`)}`
}

/** An app's entry points, the same program as ESM (`import`) and as CommonJS (`require`). */
const entries = (program: (load: (specifier: string, bound: string) => string) => string) => ({
  "app.mjs": program((s, bound) => `import { ${bound} } from "${s}"`),
  "app.cjs": program((s, bound) => `const { ${bound} } = require("${s}")`)
})

/** Writes an app (its package.json and files) and installs it with plain npm, which must report no peer conflict. */
const installApp = async (dir: string, dependencies: Record<string, string>, files: Record<string, string>) => {
  fs.mkdirSync(dir, { recursive: true })
  const manifest = { name: path.basename(dir), private: true, type: "module", dependencies }
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify(manifest, null, 2))
  for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, file), text)
  const install = await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], dir, 10)
  assert.notMatch(install.stderr, /ERESOLVE|peer dep/i, `npm reported a peer conflict:\n${install.stderr}`)
}

const bindings: Record<string, string> = {
  "@circuitry/core": "Edition",
  "@circuitry/retry": "Hedging, Retry, RetryBudget",
  "@circuitry/limiter": "Limit, Limiter",
  "@circuitry/chaos": "Chaos, Scenario",
  "@circuitry/breaker": "CircuitBreaker, Policy",
  effect: "Context, Effect, Fiber, Schedule"
}

const program = (load: (specifier: string, bound: string) => string) => `${Object.entries(bindings)
  .map(([s, bound]) => load(s, bound))
  .join("\n")}

class Budget extends Context.Service()("Budget") {}
let attempts = 0
const flaky = Effect.suspend(() => (++attempts < 3 ? Effect.fail("flaky") : Effect.succeed("ok")))
const program = Effect.gen(function* () {
  const retried = yield* flaky.pipe(Retry.retry({ schedule: Schedule.recurs(5), budget: Budget }))
  const hedging = yield* Hedging.make({ delay: "10 millis" })
  const hedged = yield* Effect.succeed("fast").pipe(Hedging.withHedging(hedging))
  const bad = yield* Effect.flip(RetryBudget.make({ window: { milliseconds: -5 } }))
  const limiter = yield* Limiter.make({ name: "app", limit: Limit.fixed(1) })
  const limited = yield* Effect.succeed("in").pipe(Limiter.withLimiter(limiter))
  const held = yield* Effect.forkChild(Limiter.withLimiter(Effect.never, limiter))
  yield* Effect.yieldNow
  const refused = yield* Effect.flip(Limiter.withLimiter(Effect.succeed("over"), limiter))
  yield* Fiber.interrupt(held)
  const badLimit = yield* Effect.flip(Limiter.make({ limit: Limit.fixed(0) }))
  const breaker = yield* CircuitBreaker.make({ name: "app", policy: Policy.consecutiveFailures(1), openFor: "1 minute" })
  yield* Effect.flip(CircuitBreaker.withBreaker(Effect.fail("down"), breaker))
  const open = yield* Effect.flip(CircuitBreaker.withBreaker(Effect.succeed("never run"), breaker))
  const report = yield* Scenario.run({
    duration: "2 seconds",
    rate: 10,
    seed: 7,
    request: () => Effect.sleep("10 millis").pipe(Chaos.inject(Chaos.fail({ rate: 0.5, error: () => "sick" })))
  })
  return {
    major: Edition.major, retried, attempts, hedged, bad: bad._tag,
    limited, refused: refused._tag, badLimit: badLimit._tag, calls: report.total.calls,
    open: open._tag, state: (yield* breaker.state)._tag
  }
}).pipe(Effect.scoped, Effect.provide(RetryBudget.layer(Budget, { ratio: 1 })))
Effect.runPromise(program).then((result) => console.log(JSON.stringify(result)))
`

/** Effect 4's idiom, strict: a Context.Service key, Duration.Input, the error types. */
const typed = `import { Edition } from "@circuitry/core"
import { BreakerRegistry, CircuitBreaker, Policy } from "@circuitry/breaker"
import { Chaos, Scenario } from "@circuitry/chaos"
import { Limit, Limiter } from "@circuitry/limiter"
import { Hedging, Retry, RetryBudget } from "@circuitry/retry"
import { Context, Duration, Effect, Layer, Result, Schedule } from "effect"

class Budget extends Context.Service<Budget, RetryBudget.RetryBudget>()("Budget") {}
class Search extends Context.Service<Search, Hedging.Hedging>()("Search") {}

const flaky: Effect.Effect<string, "flaky"> = Effect.fail("flaky")
export const retried: Effect.Effect<string, "flaky", Budget> = flaky.pipe(
  Retry.retry({ schedule: Schedule.recurs(3), budget: Budget, maxRetryAfter: { seconds: 2 } })
)
export const hedged: Effect.Effect<string, "flaky", Search> = flaky.pipe(Hedging.withHedging(Search))
const window: Duration.Input = { seconds: 10 }
export const budgets: Layer.Layer<Budget, RetryBudget.InvalidRetryOptions> = RetryBudget.layer(Budget, { window })
export const searches: Layer.Layer<Search, Hedging.InvalidRetryOptions> = Hedging.layer(Search, { delay: "50 millis" })
export const major: 4 = Edition.major

class Payments extends Context.Service<Payments, CircuitBreaker.CircuitBreaker>()("Payments") {}
export const payments: Layer.Layer<Payments, CircuitBreaker.InvalidBreakerOptions> = CircuitBreaker.layer(Payments, {
  name: "payments",
  policy: Policy.failureRate({ threshold: 0.5, minimumCalls: 10, window: Policy.timeWindow({ seconds: 30 }) }),
  openFor: { seconds: 30 }
})
export const guarded: Effect.Effect<string, "flaky" | CircuitBreaker.BreakerOpenError, Payments> = flaky.pipe(
  CircuitBreaker.withBreaker(Payments)
)
export const config: Result.Result<BreakerRegistry.TimeoutRegistryOptions, CircuitBreaker.InvalidBreakerOptions> =
  BreakerRegistry.parseConfig('{"defaults":{"openFor":"10 seconds"}}')

class Pool extends Context.Service<Pool, Limiter.Limiter>()("Pool") {}
export const pools: Layer.Layer<Pool, Limiter.InvalidLimiterOptions> = Limiter.layer(Pool, {
  limit: Limit.aimd({ timeout: { seconds: 1 } }),
  queue: { size: 10, timeout: "100 millis" }
})
export const pooled: Effect.Effect<string, "flaky" | Limiter.LimiterRejectedError, Pool> = flaky.pipe(
  Limiter.withLimiter(Pool)
)
interface Users {
  readonly find: (id: number) => Effect.Effect<string>
}
class UsersKey extends Context.Service<UsersKey, Users>()("Users") {}
export const sickUsers: Layer.Layer<UsersKey, Chaos.InvalidChaosOptions, UsersKey> = Chaos.layer(UsersKey, {
  find: Chaos.latency({ p50: "20 millis", p99: { milliseconds: 200 } })
})
export const report: Effect.Effect<Scenario.Report, Chaos.InvalidChaosOptions> = Scenario.run({
  duration: { seconds: 10 },
  rate: 100,
  request: () => Effect.void
})
`

const tsconfig = (resolution: "node16" | "bundler") => ({
  compilerOptions: {
    target: "ES2022",
    module: resolution === "node16" ? "node16" : "preserve",
    moduleResolution: resolution,
    strict: true,
    exactOptionalPropertyTypes: true,
    noEmit: true,
    skipLibCheck: false,
    types: ["node"]
  },
  files: ["typed.ts"]
})

beforeAll(async () => {
  await waitForPack(30)
  const dependencies: Record<string, string> = {
    effect: effect4,
    // @circuitry/redis's driver (a peer), at the version its tests run on.
    ioredis: readJson(path.join(root, "packages", "redis", "package.json")).devDependencies.ioredis,
    typescript: rootManifest.devDependencies.typescript,
    "@types/node": rootManifest.devDependencies["@types/node"]
  }
  for (const name of names) dependencies[name] = edition4Tarball(name)
  const configs = Object.fromEntries(
    (["node16", "bundler"] as const).map((resolution) => [
      `tsconfig.${resolution}.json`,
      JSON.stringify(tsconfig(resolution), null, 2)
    ])
  )
  await installApp(app, dependencies, { ...entries(program), "typed.ts": typed, ...configs })
}, 40 * 60_000)

// Removing three apps' node_modules can outlast the default 30 s hook limit on a loaded machine,
// and vitest fails a hook that took too long even when it ended (CI did, at stop 28): a limit of
// its own, and an asynchronous remove that leaves the event loop free meanwhile.
afterAll(() => fs.promises.rm(work, { recursive: true, force: true }), 5 * 60_000)

describe("the Effect 4 edition, packed and installed with npm into an app on effect 4", () => {
  it("each tarball's package.json peers on effect 4 and on the same edition's siblings", () => {
    for (const name of names) {
      const manifest = readJson(path.join(app, "node_modules", ...name.split("/"), "package.json"))
      assert.strictEqual(manifest.peerDependencies.effect, `^${effect4}`, name)
      assert.notMatch(JSON.stringify(manifest), /workspace:|effect3|devDependencies/, name)
      if (manifest.imports !== undefined) assert.match(JSON.stringify(manifest.imports), /effect4/, name)
    }
    for (const name of names) {
      const dist = path.join(app, "node_modules", ...name.split("/"), "dist")
      assert.deepStrictEqual(fs.readdirSync(dist), ["esm"], `${name} ships ESM only, as effect 4 does`)
    }
    const installed = readJson(path.join(app, "node_modules", "effect", "package.json")).version
    assert.strictEqual(installed, effect4)
  })

  const expected = {
    major: 4,
    retried: "ok",
    attempts: 3,
    hedged: "fast",
    bad: "InvalidRetryOptions",
    limited: "in",
    refused: "LimiterRejectedError",
    badLimit: "InvalidLimiterOptions",
    calls: 20,
    open: "BreakerOpenError",
    state: "Open"
  }
  for (const entry of ["app.mjs", "app.cjs"]) {
    it(`plain node runs it (${entry})`, { timeout: 120_000 }, async () => {
      const { stdout } = await run("node", [entry], app, 2)
      assert.deepStrictEqual(JSON.parse(stdout.trim().split("\n").pop()!), expected)
    })
  }

  for (const resolution of ["node16", "bundler"]) {
    it(`a consumer in Effect 4's idiom typechecks under ${resolution}, strict`, { timeout: 300_000 }, async () => {
      await run("node", ["node_modules/typescript/bin/tsc", "-p", `tsconfig.${resolution}.json`], app)
    })
  }

  it("the typecheck can fail: an Effect 3 Context.Tag is no key on Effect 4", { timeout: 300_000 }, async () => {
    fs.writeFileSync(
      path.join(app, "wrong.ts"),
      `import { Context } from "effect"\nexport class Old extends Context.Tag("Old")<Old, number>() {}\n`
    )
    fs.writeFileSync(
      path.join(app, "tsconfig.wrong.json"),
      JSON.stringify({ extends: "./tsconfig.node16.json", files: ["wrong.ts"] })
    )
    const failed = await run("node", ["node_modules/typescript/bin/tsc", "-p", "tsconfig.wrong.json"], app).then(
      () => undefined,
      (error: Error) => error.message
    )
    assert.match(failed ?? "", /wrong\.ts\(2,\d+\): error TS\d+: Property 'Tag' does not exist/)
  })
})

/**
 * @circuitry/platform's Effect 4 edition in an app of its own, with `@effect/platform-node` 4 (an
 * optional peer, which the app above does not install): a real Node server serves a route layer
 * whose breaker is isolated, through `BreakerHttpServer.layerHttpApi()` (on Effect 4 a global
 * router middleware), and the health route beside it, run by plain `node` as ESM and as CommonJS.
 */
describe("@circuitry/platform's Effect 4 edition serves over @effect/platform-node 4", () => {
  const serverApp = path.join(work, "platform-app")
  const platformNode = readJson(path.join(root, "editions", "effect4", "package.json")).devDependencies[
    "@effect/platform-node"
  ] as string
  const platformBindings: Record<string, string> = {
    "@circuitry/breaker": "BreakerRegistry",
    "@circuitry/platform": "BreakerHttpServer, HealthRoute",
    "@effect/platform-node": "NodeHttpServer",
    effect: "Context, Effect, Layer",
    "effect/http": "HttpRouter, HttpServer, HttpServerResponse",
    "node:http": "createServer"
  }
  const serverProgram = (load: (specifier: string, bound: string) => string) => `${Object.entries(platformBindings)
    .map(([s, bound]) => load(s, bound))
    .join("\n")}

const program = Effect.gen(function* () {
  const registry = yield* BreakerRegistry.make()
  const charge = Effect.succeed(HttpServerResponse.text("charged")).pipe(BreakerRegistry.withBreakerFor("payments"))
  const routes = Layer.mergeAll(HttpRouter.add("GET", "/charge", charge), HealthRoute.router(), BreakerHttpServer.layerHttpApi())
  const context = yield* Layer.build(
    HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
      Layer.provide(Layer.succeed(BreakerRegistry.BreakerRegistry, registry)),
      Layer.provideMerge(NodeHttpServer.layer(() => createServer(), { port: 0, host: "127.0.0.1" }))
    )
  )
  const url = "http://127.0.0.1:" + Context.get(context, HttpServer.HttpServer).address.port
  const get = (path) => Effect.promise(() => fetch(url + path).then(async (r) => ({ status: r.status, type: r.headers.get("content-type"), body: await r.text() })))
  const before = yield* get("/charge")
  yield* Effect.flatMap(registry.get("payments"), (breaker) => breaker.isolate)
  const after = yield* get("/charge")
  const health = JSON.parse((yield* get("/health/breakers")).body)
  return {
    before: [before.status, before.body],
    after: [after.status, after.type, JSON.parse(after.body).state],
    health: health.breakers.map((b) => [b.name, b.state])
  }
}).pipe(Effect.scoped)
Effect.runPromise(program).then((result) => console.log(JSON.stringify(result)))
`

  beforeAll(async () => {
    await waitForPack(30)
    const dependencies: Record<string, string> = { effect: effect4, "@effect/platform-node": platformNode }
    for (const name of names) dependencies[name] = edition4Tarball(name)
    await installApp(serverApp, dependencies, entries(serverProgram))
  }, 40 * 60_000)

  for (const entry of ["app.mjs", "app.cjs"]) {
    it(`plain node serves a request through BreakerHttpServer (${entry})`, { timeout: 120_000 }, async () => {
      const { stdout } = await run("node", [entry], serverApp, 2)
      assert.deepStrictEqual(JSON.parse(stdout.trim().split("\n").pop()!), {
        before: [200, "charged"],
        after: [503, "application/problem+json", "Isolated"],
        health: [["payments", "Isolated"]]
      })
    })
  }
})

/**
 * `@circuitry/redis` on Effect 4, from plain node: two breakers of one name, each on a
 * RedisBreakerStore of its own (its own connections) on the test Redis (127.0.0.1:6379), share
 * one verdict; a bad option is the store's typed `InvalidRedisOptions`.
 */
const redisProgram = (load: (specifier: string, bindings: string) => string) => `${load("@circuitry/core", "Edition")}
${load("@circuitry/breaker", "CircuitBreaker, Policy")}
${load("@circuitry/redis", "RedisBreakerStore")}
${load("effect", "Effect, Layer")}
${load("ioredis", "Redis")}

const url = "redis://127.0.0.1:6379"
const prefix = "circuitry:edition4:" + process.pid + ":" + Date.now() + ":"
const options = { name: "payments", policy: Policy.consecutiveFailures(1), openFor: "1 minute" }
const member = (deadline) =>
  Effect.flatMap(Layer.build(RedisBreakerStore.layer({ url, prefix, deadline })), (store) =>
    CircuitBreaker.make(options).pipe(Effect.provide(store))
  )
const program = Effect.gen(function* () {
  const here = yield* member("1 second")
  const there = yield* member("2 seconds")
  yield* Effect.flip(CircuitBreaker.withBreaker(Effect.fail("down"), here))
  let seen = (yield* there.state)._tag
  for (let i = 0; i < 200 && seen !== "Open"; i++) {
    yield* Effect.sleep("50 millis")
    seen = (yield* there.state)._tag
  }
  const bad = yield* Effect.flip(Layer.build(RedisBreakerStore.layer({ url, deadline: 0 })))
  return { major: Edition.major, here: (yield* here.state)._tag, there: seen, bad: bad._tag, message: bad.message }
}).pipe(Effect.scoped)
Effect.runPromise(program).then(async (result) => {
  const admin = new Redis(url)
  const keys = await admin.keys(prefix + "*")
  if (keys.length > 0) await admin.del(...keys)
  admin.disconnect()
  console.log(JSON.stringify(result))
})
`

describe("@circuitry/redis on Effect 4, installed with npm, from plain node", () => {
  const files = {
    "redis.mjs": redisProgram((s, b) => `import { ${b} } from "${s}"`),
    "redis.cjs": redisProgram((s, b) => `const { ${b} } = require("${s}")`)
  }
  for (const [entry, source] of Object.entries(files)) {
    it(`a RedisBreakerStore on 127.0.0.1:6379 shares a verdict (${entry})`, { timeout: 120_000 }, async () => {
      fs.writeFileSync(path.join(app, entry), source)
      const { stdout } = await run("node", [entry], app, 2)
      assert.deepStrictEqual(JSON.parse(stdout.trim().split("\n").pop()!), {
        major: 4,
        here: "Open",
        there: "Open",
        bad: "InvalidRedisOptions",
        message: "deadline must be a finite duration > 0, got 0"
      })
    })
  }
})

/**
 * The sql edition for Effect 4 in an app of its own (libsql beside it, its optional peer): plain
 * node opens a SQLite store, a breaker trips on it, and a second breaker of the same name loads
 * the open verdict from the file.
 */
describe("the Effect 4 edition of @circuitry/sql, installed with libsql", () => {
  const sqlApp = path.join(work, "sql-app")
  const sqlProgram = (
    load: (specifier: string, bound: string) => string
  ) => `${load("@circuitry/breaker", "CircuitBreaker, Policy")}
${load("@circuitry/sql", "SqlBreakerStore")}
${load("effect", "Effect")}
${load("node:path", "join")}
${load("node:os", "tmpdir")}
${load("node:fs", "mkdtempSync")}

const filename = join(mkdtempSync(join(tmpdir(), "sql-app-")), "breakers.db")
const make = CircuitBreaker.make({ name: "mail", policy: Policy.consecutiveFailures(1), openFor: "1 minute" })
const program = Effect.gen(function* () {
  const breaker = yield* make
  yield* Effect.flip(CircuitBreaker.withBreaker(Effect.fail("down"), breaker))
  // The verdict is saved in the background: a breaker made later loads it from the file.
  for (let i = 0; i < 500; i++) {
    const later = yield* make
    if ((yield* later.state)._tag === "Open") break
    yield* Effect.sleep("10 millis")
  }
  const loaded = yield* make
  const store = yield* SqlBreakerStore.SqlBreakerStore
  const bad = yield* Effect.flip(Effect.scoped(Effect.provide(Effect.void, SqlBreakerStore.layerSqlite({ filename, busyTimeout: -1 }))))
  return { table: store.table, state: (yield* breaker.state)._tag, loaded: (yield* loaded.state)._tag, bad: bad._tag }
}).pipe(Effect.scoped, Effect.provide(SqlBreakerStore.layerSqlite({ filename })))
Effect.runPromise(program).then((result) => console.log(JSON.stringify(result)))
`

  beforeAll(async () => {
    await waitForPack(30)
    const libsql = readJson(path.join(root, "packages", "sql", "package.json")).devDependencies.libsql as string
    const dependencies: Record<string, string> = { effect: effect4, libsql }
    for (const name of ["@circuitry/core", "@circuitry/breaker", "@circuitry/sql"]) {
      dependencies[name] = edition4Tarball(name)
    }
    await installApp(sqlApp, dependencies, entries(sqlProgram))
  }, 40 * 60_000)

  it("its manifest peers on effect 4 and @effect/sql-pg 4 (optional), not on @effect/sql", () => {
    const manifest = readJson(path.join(sqlApp, "node_modules", "@circuitry", "sql", "package.json"))
    assert.strictEqual(manifest.peerDependencies.effect, `^${effect4}`)
    assert.match(manifest.peerDependencies["@effect/sql-pg"], /^\^4\./)
    assert.deepStrictEqual(manifest.peerDependenciesMeta, {
      "@effect/sql-pg": { optional: true },
      libsql: { optional: true }
    })
    assert.notProperty(manifest.peerDependencies, "@effect/sql")
    assert.notProperty(manifest.peerDependencies, "@effect/experimental")
  })

  for (const entry of ["app.mjs", "app.cjs"]) {
    it(`plain node opens a SQLite store (${entry})`, { timeout: 120_000 }, async () => {
      const { stdout } = await run("node", [entry], sqlApp, 2)
      assert.deepStrictEqual(JSON.parse(stdout.trim().split("\n").pop()!), {
        table: "circuitry_breakers",
        state: "Open",
        loaded: "Open",
        bad: "InvalidSqlOptions"
      })
    })
  }
})
