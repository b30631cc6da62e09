/**
 * The packages as a user gets them. `pnpm release:pack` (the command docs/getting-started.md gives;
 * run once for both consumer tests by test/pack.setup.ts) builds and packs every public package
 * (found, not listed); plain npm installs the tarballs into
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
import { createRequire } from "node:module"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { ported } from "../../../editions/effect4/ported.js"
import { type PublicPackage, publicPackages, root, subpaths } from "./packages.js"
import { tarballs, waitForPack } from "./packed.js"
import { run } from "./run.js"

const packages = publicPackages()
const appSource = path.join(root, "packages", "consumer", "app")
const work = fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-consumer-"))
const app = path.join(work, "app")
/** Where `pnpm release:pack <dir>` writes the Effect 3 edition. */
const edition = path.join(tarballs, "effect3")
/** The version the Effect 3 edition publishes (docs/editions.md): the repository's 0.M.P as 3.M.P. */
const effect3Version = (pkg: PublicPackage) => pkg.manifest.version.replace(/^0\./, "3.")

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
  // Both editions of every package built and packed (test/pack.setup.ts): minutes on a loaded machine
  // (over 20 at load 40-48).
  await step("waiting for pnpm release:pack", () => waitForPack(30))
  for (const pkg of packages) {
    const tarball = path.join(edition, `${pkg.manifest.name.slice(1).replace("/", "-")}-${effect3Version(pkg)}.tgz`)
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
}, 50 * 60_000)

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
    const names = packages.map((pkg) => `${pkg.manifest.name.slice(1).replace("/", "-")}-${effect3Version(pkg)}.tgz`)
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

/**
 * Both editions as `pnpm release:pack` wrote them, and as npm will see them once published
 * (docs/editions.md, "Publishing both editions"): the repository's version 0.M.P is 3.M.P in the
 * Effect 3 edition (dist-tag `effect3`) and 4.M.P in the Effect 4 one (`latest`).
 */
describe("the two editions on npm: versions, ranges, dist-tags", () => {
  const effect4Edition = path.join(tarballs, "effect4")
  const rootEffect3 = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).devDependencies.effect
  const effect4 = JSON.parse(fs.readFileSync(path.join(root, "editions", "effect4", "package.json"), "utf8"))
    .devDependencies.effect as string
  const editions = [
    { major: 3, dir: edition, packages, effect: "^3.22.0" },
    {
      major: 4,
      dir: effect4Edition,
      packages: packages.filter((pkg) => ported.includes(pkg.folder)),
      effect: `^${effect4}`
    }
  ] as const
  const versionOf = (pkg: PublicPackage, major: number) => {
    assert.match(pkg.manifest.version, /^0\.\d+\.\d+$/, `${pkg.manifest.name}: the scheme is for circuitry 0.x`)
    return pkg.manifest.version.replace(/^0\./, `${major}.`)
  }
  const fileOf = (pkg: PublicPackage, major: number) =>
    `${pkg.manifest.name.slice(1).replace("/", "-")}-${versionOf(pkg, major)}.tgz`
  const manifestIn = async (tarball: string) =>
    JSON.parse((await run("tar", ["-xzOf", tarball, "package/package.json"], work)).stdout) as Record<string, any>

  it("each tarball's package.json has its edition's version, peer effect range and sibling ranges", async () => {
    assert.isAbove(editions[1].packages.length, 0, "no package is ported to Effect 4")
    for (const { major, dir, packages: inEdition, effect } of editions) {
      const files = inEdition.map((pkg) => fileOf(pkg, major))
      assert.deepStrictEqual(fs.readdirSync(dir).sort(), files.sort(), `what ${dir} holds`)
      for (const pkg of inEdition) {
        const manifest = await manifestIn(path.join(dir, fileOf(pkg, major)))
        assert.strictEqual(manifest.version, versionOf(pkg, major), pkg.manifest.name)
        assert.strictEqual(manifest.peerDependencies.effect, effect, `${pkg.manifest.name}'s peer effect`)
        const siblings = Object.keys(pkg.manifest.peerDependencies as object).filter((n) => n.startsWith("@circuitry/"))
        for (const name of siblings) {
          const sibling = inEdition.find((other) => other.manifest.name === name)
          assert.isDefined(sibling, `${pkg.manifest.name} peers on ${name}, which has no Effect ${major} edition`)
          assert.strictEqual(manifest.peerDependencies[name], `^${versionOf(sibling!, major)}`, `${pkg.manifest.name}`)
        }
        assert.deepStrictEqual(
          Object.keys(manifest.peerDependencies)
            .filter((n) => n.startsWith("@circuitry/"))
            .sort(),
          siblings.sort()
        )
      }
    }
  })

  it("the range npm saves for one edition admits no version of the other (npm's own semver)", async () => {
    // The semver package npm itself resolves ranges with, and the prefix it saves them with.
    const npmRoot = (await run("npm", ["root", "-g"], work)).stdout.trim()
    const semver = createRequire(import.meta.url)(path.join(npmRoot, "npm", "node_modules", "semver"))
    const prefix = (await run("npm", ["config", "get", "save-prefix"], work)).stdout.trim()
    assert.strictEqual(prefix, "^")
    const all = { includePrerelease: true }
    const versions = await Promise.all(
      editions.map(async ({ dir }) =>
        Promise.all(fs.readdirSync(dir).map(async (file) => (await manifestIn(path.join(dir, file))).version as string))
      )
    )
    for (const [i, { major }] of editions.entries()) {
      const others = versions[1 - i]!
      const otherMajor = editions[1 - i]!.major
      for (const version of versions[i]!) {
        const saved = `${prefix}${version}`
        // Any version of the other edition, released or to come (each is otherMajor.x.y), prereleases too.
        assert.isFalse(semver.intersects(saved, `>=${otherMajor}.0.0-0 <${otherMajor + 1}.0.0-0`, all), saved)
        for (const other of others) assert.isFalse(semver.satisfies(other, saved, all), `${saved} admits ${other}`)
        // Not empty: it admits this edition's next patch and minor.
        assert.isTrue(semver.satisfies(semver.inc(version, "patch"), saved), `${saved}, a patch`)
        assert.isTrue(semver.satisfies(semver.inc(version, "minor"), saved), `${saved}, a minor`)
        assert.strictEqual(semver.major(version), major)
      }
    }
    // The scheme docs/editions.md turned down: a suffixed Effect 3 edition's range admits Effect 4's.
    assert.isTrue(semver.satisfies("0.2.0", "^0.2.0-effect3"))
  })

  it("each tarball ships the changelog with its edition's versions", async () => {
    const versions = await import(pathToFileURL(path.join(root, "scripts", "release-versions.mjs")).href)
    // As `changeset version` writes it: headings, and the siblings a release moved to.
    const changelog = (major: number) =>
      [
        "# @circuitry/cache",
        `## ${major}.3.1`,
        "### Patch Changes",
        "- 1a2b3c4: On Effect 4, `ttl` takes a Duration.Input (since 1.2.3 of nothing).",
        `- Updated dependencies [1a2b3c4]\n  - @circuitry/breaker@${major}.3.1`,
        `## ${major}.3.0`
      ].join("\n\n")
    assert.strictEqual(versions.editionChangelog(changelog(0), 3), changelog(3))
    assert.strictEqual(versions.editionChangelog(changelog(0), 4), changelog(4))
    assert.throws(() => versions.editionVersion("1.0.0", 4), /circuitry's own major \(1\) needs a new scheme/)
    for (const { major, dir, packages: inEdition } of editions) {
      for (const pkg of inEdition) {
        const shipped = (await run("tar", ["-xzOf", path.join(dir, fileOf(pkg, major)), "package/CHANGELOG.md"], work))
          .stdout
        const source = fs.readFileSync(path.join(pkg.dir, "CHANGELOG.md"), "utf8")
        assert.strictEqual(shipped, versions.editionChangelog(source, major), `${pkg.manifest.name}, Effect ${major}`)
        assert.notMatch(shipped, /^#+ 0\.\d+\.\d+/m, `${pkg.manifest.name}, Effect ${major}`)
      }
    }
  })

  it("the publish plan tags Effect 4 tarballs latest and Effect 3 ones effect3, siblings first", async () => {
    const plan = (await run("node", [path.join(root, "scripts", "release-publish.mjs"), tarballs], work)).stdout
      .trim()
      .split("\n")
    const expected = editions.flatMap(({ major, dir, packages: inEdition }) =>
      inEdition.map(
        (pkg) => `npm publish ${path.join(dir, fileOf(pkg, major))} --tag ${major === 4 ? "latest" : "effect3"}`
      )
    )
    // An Effect 3 edition is never published under latest; a package not ported yet gets latest on it.
    const unported = packages.filter((pkg) => !ported.includes(pkg.folder))
    const tags = unported.map((pkg) => `npm dist-tag add ${pkg.manifest.name}@${versionOf(pkg, 3)} latest`)
    assert.deepStrictEqual([...plan].sort(), [...expected, ...tags].sort())
    for (const { major, dir, packages: inEdition } of editions) {
      const at = (pkg: PublicPackage) => plan.findIndex((line) => line.includes(path.join(dir, fileOf(pkg, major))))
      for (const pkg of inEdition) {
        for (const name of Object.keys(pkg.manifest.peerDependencies as object)) {
          const sibling = inEdition.find((other) => other.manifest.name === name)
          if (sibling !== undefined) assert.isBelow(at(sibling), at(pkg), `${name} before ${pkg.manifest.name}`)
        }
      }
    }
  })

  // The ported packages of each edition (their peers are effect and their siblings: no registry fetch).
  for (const [i, { major }] of editions.entries()) {
    const appMajor = major === 3 ? 4 : 3
    it(
      `an app on effect ${appMajor} that installs the Effect ${major} edition gets npm's peer error`,
      {
        timeout: 300_000
      },
      async () => {
        const wrong = path.join(work, `effect${appMajor}-app-effect${major}-edition`)
        fs.mkdirSync(wrong)
        const dependencies: Record<string, string> = { effect: appMajor === 4 ? effect4 : rootEffect3 }
        for (const pkg of editions[1].packages) {
          dependencies[pkg.manifest.name] = `file:${path.join(editions[i]!.dir, fileOf(pkg, major))}`
        }
        fs.writeFileSync(
          path.join(wrong, "package.json"),
          JSON.stringify({ name: "wrong-edition", private: true, dependencies })
        )
        const failed = await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], wrong).then(
          () => undefined,
          (error: Error) => error.message
        )
        assert.match(failed ?? "npm install succeeded", /ERESOLVE/)
        const range = editions[i]!.effect.replace(/[.^]/g, (c) => `\\${c}`)
        assert.match(failed ?? "", new RegExp(`peer effect@"${range}" from @circuitry/\\w+@${major}\\.\\d+\\.\\d+`))
      }
    )
  }
})
