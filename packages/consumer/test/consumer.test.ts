/**
 * The packages as a user gets them. `pnpm release:pack` (the command docs/getting-started.md gives)
 * builds and packs every public package (found, not listed); plain npm installs the tarballs into
 * an app under the OS temp folder (outside the workspace: no pnpm, no tsx, no aliases, no source
 * condition); then app/ runs there with plain `node`, as ESM and as CommonJS, against real Redis,
 * SQLite and HTTP servers, and a TypeScript consumer typechecks under node16 and bundler resolution.
 *
 * The peers the app installs are the versions this repository tests with (each package's
 * devDependencies). The SQLite run uses libsql's prebuilt binary (an npm package per platform), so
 * it also proves that a clean install needs no compiler.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { publicPackages, root, subpaths } from "./packages.js"
import { run } from "./run.js"

const packages = publicPackages()
const appSource = path.join(root, "packages", "consumer", "app")
const work = fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-consumer-"))
const app = path.join(work, "app")
const tarballs = path.join(work, "tarballs")
/** Where `pnpm release:pack <dir>` writes the Effect 3 edition. */
const edition = path.join(tarballs, "effect3")

const pnpm = (args: ReadonlyArray<string>, cwd: string, timeoutMinutes?: number) =>
  run("npx", ["-y", "pnpm@10.34.9", ...args], cwd, timeoutMinutes)

interface PackedFile {
  readonly path: string
}
const packed = new Map<
  string,
  { readonly tarball: string; readonly files: ReadonlyArray<string>; readonly manifest: Record<string, unknown> }
>()

/** Every module of every public package, by the specifier a user writes. */
const specifiers = packages.flatMap((pkg) =>
  subpaths(pkg).map((subpath) => (subpath === "." ? pkg.manifest.name : `${pkg.manifest.name}/${subpath.slice(2)}`))
)

const server = http.createServer((_request, response) => {
  hits++
  response.writeHead(500, { "content-type": "text/plain" }).end("down")
})
let hits = 0

/** Logs how long each step took (packing and the npm install are the long ones). */
const step = async <A>(name: string, f: () => Promise<A>): Promise<A> => {
  const start = performance.now()
  const a = await f()
  console.log(`consumer test: ${name} took ${((performance.now() - start) / 1000).toFixed(1)} s`)
  return a
}

beforeAll(async () => {
  // Sixteen tsc runs and eight packs: on a loaded machine this takes minutes.
  await step("pnpm release:pack", () => pnpm(["release:pack", tarballs], root, 20))
  for (const pkg of packages) {
    const tarball = path.join(edition, `${pkg.manifest.name.slice(1).replace("/", "-")}-${pkg.manifest.version}.tgz`)
    // What npm would publish, read from the very tarball the app installs.
    const { stdout } = await run("npm", ["pack", "--dry-run", "--json", tarball], work)
    const [info] = JSON.parse(stdout) as Array<{ files: Array<PackedFile> }>
    const manifest = JSON.parse((await run("tar", ["-xzOf", tarball, "package/package.json"], work)).stdout)
    packed.set(pkg.manifest.name, { tarball, files: info!.files.map((f) => f.path), manifest })
  }

  // The app: the tarballs, and the peers at the versions this repository tests.
  const rootManifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"))
  const tested: Record<string, string> = {
    typescript: rootManifest.devDependencies.typescript,
    "@types/node": rootManifest.devDependencies["@types/node"]
  }
  for (const pkg of packages) {
    for (const [name, version] of Object.entries((pkg.manifest.devDependencies ?? {}) as Record<string, string>)) {
      if (!version.startsWith("workspace:")) tested[name] = version
    }
  }
  const dependencies = {
    ...tested,
    ...Object.fromEntries(packages.map((pkg) => [pkg.manifest.name, `file:${packed.get(pkg.manifest.name)!.tarball}`]))
  }
  fs.mkdirSync(app)
  fs.writeFileSync(
    path.join(app, "package.json"),
    JSON.stringify({ name: "consumer-app", private: true, type: "module", dependencies }, null, 2)
  )
  for (const file of fs.readdirSync(appSource)) fs.copyFileSync(path.join(appSource, file), path.join(app, file))
  const imports = specifiers.map((s, i) => `import * as m${i} from "${s}"`).join("\n")
  const all = `\nexport const all = [${specifiers.map((_, i) => `m${i}`).join(", ")}]\n`
  fs.writeFileSync(path.join(app, "modules.mts"), imports + all)
  fs.writeFileSync(path.join(app, "modules.cts"), imports + all)
  const install = await step("npm install", () =>
    run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], app, 15)
  )
  assert.notMatch(install.stderr, /ERESOLVE|peer dep/i, `npm reported a peer conflict:\n${install.stderr}`)

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  // At load average 30 on 2 cores, release:pack took 686 s and the install 828 s while it compiled
  // better-sqlite3; with libsql the install took 10.9 s at load 10-13.
}, 40 * 60_000)

// Removing the app's node_modules can outlast the default 30 s hook limit on a loaded machine
// (vitest fails a hook that took too long even when it ended), so it has a limit of its own.
afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await fs.promises.rm(work, { recursive: true, force: true })
}, 5 * 60_000)

describe("the packed packages, installed with npm into an app outside the workspace", () => {
  it("every public package's tarball holds its build, its sources and docs, nothing else", () => {
    for (const pkg of packages) {
      const files = packed.get(pkg.manifest.name)!.files
      const stray = files.filter(
        (f) =>
          !/^(dist\/(esm|cjs)\/.+|src\/.+\.ts|package\.json|README\.md|CHANGELOG\.md|LICENSE)$/.test(f) ||
          /(^|\/)(test|tests|bench|fixtures)\/|\.test\.|vitest|tsconfig|\.tsbuildinfo$/.test(f)
      )
      assert.deepStrictEqual(stray, [], `${pkg.manifest.name} would publish tests, benches or configs`)
      assert.include(files, "dist/cjs/package.json", `${pkg.manifest.name}: dist/cjs must be marked CommonJS`)
      for (const m of ["index", ...pkg.modules]) {
        for (const f of [`dist/esm/${m}.js`, `dist/esm/${m}.d.ts`, `dist/esm/${m}.d.ts.map`, `dist/cjs/${m}.js`]) {
          assert.include(files, f, `${pkg.manifest.name} misses ${f}`)
        }
        assert.include(files, `dist/cjs/${m}.d.ts`, `${pkg.manifest.name} misses dist/cjs/${m}.d.ts`)
      }
    }
  })

  it("release:pack wrote one tarball per public package, each with its CHANGELOG.md and no repository scripts", () => {
    const names = packages.map((pkg) => `${pkg.manifest.name.slice(1).replace("/", "-")}-${pkg.manifest.version}.tgz`)
    assert.deepStrictEqual(fs.readdirSync(edition).sort(), names.sort(), `what ${edition} holds`)
    for (const pkg of packages) {
      const { files, manifest } = packed.get(pkg.manifest.name)!
      assert.include(files, "CHANGELOG.md", `${pkg.manifest.name} ships no CHANGELOG.md`)
      // The repository's `build` and `mutate` (and whatever script comes next) stay in the repository.
      assert.isUndefined(manifest.scripts, `${pkg.manifest.name}'s packed scripts: ${JSON.stringify(manifest.scripts)}`)
      assert.isUndefined(manifest.devDependencies, `${pkg.manifest.name}'s packed devDependencies`)
      assert.notInclude(JSON.stringify(manifest.exports), "@circuitry/source", `${pkg.manifest.name}'s packed exports`)
      assert.deepStrictEqual(Object.keys(manifest.exports as object), Object.keys(pkg.manifest.exports as object))
    }
  })

  it("a packed manifest names real versions of its siblings; dist/cjs is CommonJS without side effects", () => {
    for (const pkg of packages) {
      const manifest = JSON.parse(
        fs.readFileSync(path.join(app, "node_modules", ...pkg.manifest.name.split("/"), "package.json"), "utf8")
      )
      assert.notMatch(JSON.stringify(manifest), /workspace:/, `${pkg.manifest.name}'s packed package.json`)
      const cjs = JSON.parse(
        fs.readFileSync(
          path.join(app, "node_modules", ...pkg.manifest.name.split("/"), "dist/cjs/package.json"),
          "utf8"
        )
      )
      assert.deepStrictEqual(cjs, { type: "commonjs", sideEffects: [] }, `${pkg.manifest.name}: dist/cjs/package.json`)
    }
  })

  const config = () => ({
    modules: specifiers,
    internal: "@circuitry/breaker/internal/machine",
    redisUrl: "redis://127.0.0.1:6379",
    prefix: `circuitry-consumer-${process.pid}-${Date.now()}:`,
    sqliteFile: path.join(work, `breakers-${Date.now()}.db`),
    httpUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/charge`
  })

  const expected = {
    internal: "ERR_PACKAGE_PATH_NOT_EXPORTED",
    breaker: {
      ran: 2,
      state: "Open",
      error: "BreakerOpenError",
      isBreakerOpenError: true,
      breaker: "payments",
      retryAfterPositive: true
    },
    cache: { stored: true, hit: "ada", shedWhileIsolated: true },
    redis: { stored: true, read: "from redis", deleted: true },
    sql: { first: "Open", later: "Open" },
    http: { statuses: [500, 500], error: "BreakerOpenError" }
  }

  const runApp = async (entry: string) => {
    hits = 0
    const { stdout } = await run("node", [entry, JSON.stringify(config())], app, 2)
    const { modules, ...result } = JSON.parse(stdout.trim().split("\n").pop()!)
    assert.deepStrictEqual(result, expected)
    assert.strictEqual(hits, 2, "the HTTP server saw the two calls before the circuit opened, and no more")
    for (const specifier of specifiers) {
      assert.isAbove(modules[specifier]?.length ?? 0, 0, `${entry}: ${specifier} exports nothing`)
    }
    return modules as Record<string, ReadonlyArray<string>>
  }

  // One run of the ESM app, shared: the CommonJS test compares with it, and fails when it failed
  // (or runs it itself when it runs alone).
  let esmRun: Promise<Record<string, ReadonlyArray<string>>> | undefined
  const esm = () => (esmRun ??= runApp("app.mjs"))
  it("plain node runs it as ESM (app.mjs: import)", { timeout: 180_000 }, async () => {
    await esm()
  })

  it("plain node runs it as CommonJS (app.cjs: require), with the same exports", { timeout: 180_000 }, async () => {
    const cjs = await runApp("app.cjs")
    const imported = await esm().catch((e: unknown) => {
      throw new Error(`the ESM app failed, so there is nothing to compare require's exports with: ${String(e)}`)
    })
    assert.deepStrictEqual(cjs, imported, "require and import see different exports")
  })

  for (const resolution of ["node16", "bundler"]) {
    it(
      `a TypeScript consumer typechecks under moduleResolution ${resolution}, strict`,
      { timeout: 300_000 },
      async () => {
        await run("node", ["node_modules/typescript/bin/tsc", "-p", `tsconfig.${resolution}.json`], app)
      }
    )
  }

  it("the typecheck can fail: a wrong type in the consumer is reported", { timeout: 300_000 }, async () => {
    fs.writeFileSync(
      path.join(app, "wrong.ts"),
      `import { CircuitBreaker } from "@circuitry/breaker"\nexport const bad: number = CircuitBreaker.make\n`
    )
    const failed = await run(
      "node",
      ["node_modules/typescript/bin/tsc", "--noEmit", "--strict", "--skipLibCheck", "wrong.ts"],
      app
    ).then(
      () => undefined,
      (error: Error) => error.message
    )
    assert.match(failed ?? "", /wrong\.ts.*TS2322/s)
  })
})
