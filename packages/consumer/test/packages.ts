/**
 * The public packages, found rather than listed: every packages/<folder>/package.json without
 * `"private": true`. A package written today (exports to ./src) fails `problems` below with what to
 * change, so adopting a new one is mechanical: the message is the to-do list.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

export interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly [field: string]: unknown
}

export interface PublicPackage {
  readonly folder: string
  readonly dir: string
  readonly manifest: Manifest
  /** Public modules: src/*.ts other than index.ts (internal/ is not public). */
  readonly modules: ReadonlyArray<string>
}

const readJson = (file: string): any => JSON.parse(fs.readFileSync(file, "utf8"))

export const publicPackages = (): Array<PublicPackage> =>
  fs
    .readdirSync(path.join(root, "packages"))
    .sort()
    .flatMap((folder) => {
      const dir = path.join(root, "packages", folder)
      const file = path.join(dir, "package.json")
      if (!fs.existsSync(file)) return []
      const manifest = readJson(file) as Manifest
      if (manifest.private === true) return []
      const src = path.join(dir, "src")
      const modules = fs.existsSync(src)
        ? fs
            .readdirSync(src)
            .filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && f !== "index.ts")
            .map((f) => f.slice(0, -3))
            .sort()
        : []
      return [{ folder, dir, manifest, modules }]
    })

/** The subpaths a package exports: "." and one per public module. */
export const subpaths = (pkg: PublicPackage): Array<string> => [".", ...pkg.modules.map((m) => `./${m}`)]

const entry = (module: string) => ({
  "@circuitry/source": `./src/${module}.ts`,
  import: { types: `./dist/esm/${module}.d.ts`, default: `./dist/esm/${module}.js` },
  require: { types: `./dist/cjs/${module}.d.ts`, default: `./dist/cjs/${module}.js` }
})

/** The exports map every public package has: the sources for the repository, dist/ for users. */
export const expectedExports = (pkg: PublicPackage): Record<string, unknown> => ({
  "./package.json": "./package.json",
  ".": entry("index"),
  ...Object.fromEntries(pkg.modules.map((m) => [`./${m}`, entry(m)])),
  "./internal/*": null
})

export const buildConfig = {
  extends: "../../tsconfig.build.json",
  compilerOptions: { rootDir: "src", outDir: "dist/esm" },
  include: ["src"]
}

/** Packages whose imports must be peers (one copy in the app), never bundled dependencies. */
const mustBePeer = (name: string): boolean =>
  name === "effect" || name.startsWith("@effect/") || name.startsWith("@circuitry/") || name === "ioredis"

const packageOf = (specifier: string): string =>
  specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!

/** Bare specifiers the sources import (static, dynamic and type-only), JSDoc examples aside. */
const importsOf = (dir: string): Set<string> => {
  const found = new Set<string>()
  const walk = (d: string) => {
    for (const f of fs.readdirSync(d, { withFileTypes: true })) {
      const full = path.join(d, f.name)
      if (f.isDirectory()) walk(full)
      else if (f.name.endsWith(".ts")) {
        const code = fs
          .readFileSync(full, "utf8")
          .replace(/\/\*[\s\S]*?\*\//g, "")
          .replace(/^\s*\/\/.*$/gm, "")
        for (const m of code.matchAll(/(?:from\s+|import\s*\(\s*)"([^".][^"]*)"/g)) {
          if (!m[1]!.startsWith("node:")) found.add(packageOf(m[1]!))
        }
      }
    }
  }
  if (fs.existsSync(dir)) walk(dir)
  return found
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

/** What `pkg` lacks to be published; empty when it has the release shape. */
export const problems = (pkg: PublicPackage): Array<string> => {
  const m = pkg.manifest
  const out: Array<string> = []
  const want = (ok: boolean, message: string) => {
    if (!ok) out.push(message)
  }
  const record = (field: string) => (m[field] ?? {}) as Record<string, string>
  const peers = record("peerDependencies")
  const dev = record("devDependencies")
  const deps = record("dependencies")
  const meta = record("peerDependenciesMeta") as Record<string, unknown>

  want(typeof m.description === "string" && m.description.length > 0, `"description": say what the package holds`)
  want(m.type === "module", `"type": "module"`)
  want(m.license === "MIT", `"license": "MIT"`)
  want(
    same(m.repository, {
      type: "git",
      url: "git+https://github.com/circuitry/circuitry.git",
      directory: `packages/${pkg.folder}`
    }),
    `"repository": { "type": "git", "url": "git+https://github.com/circuitry/circuitry.git", "directory": "packages/${pkg.folder}" }`
  )
  want(same(m.engines, { node: ">=20" }), `"engines": { "node": ">=20" }`)
  want(same(m.sideEffects, []), `"sideEffects": []`)
  want(
    same(m.files, ["dist", "src", "CHANGELOG.md"]),
    `"files": ["dist", "src", "CHANGELOG.md"] (the build, the sources its maps point at, and the changes; pnpm pack adds README.md and LICENSE)`
  )
  want(
    m.main === "./dist/cjs/index.js" && m.module === "./dist/esm/index.js" && m.types === "./dist/cjs/index.d.ts",
    `"main": "./dist/cjs/index.js", "module": "./dist/esm/index.js", "types": "./dist/cjs/index.d.ts" (for resolvers that predate exports)`
  )
  const exports = expectedExports(pkg)
  want(
    same(m.exports, exports),
    `"exports" must be exactly (one entry per src/*.ts module):\n${JSON.stringify(exports, null, 2)}`
  )
  want(same(m.publishConfig, { access: "public" }), `"publishConfig": { "access": "public" }`)
  want(
    (m.scripts as Record<string, string> | undefined)?.build === "node ../../scripts/build-package.mjs",
    `"scripts": { "build": "node ../../scripts/build-package.mjs" }`
  )
  const tsconfig = path.join(pkg.dir, "tsconfig.build.json")
  want(
    fs.existsSync(tsconfig) && same(readJson(tsconfig), buildConfig),
    `tsconfig.build.json must be ${JSON.stringify(buildConfig)}`
  )
  // `paths` would win over the "@circuitry/source" condition and send imports somewhere else.
  const editorConfig = path.join(pkg.dir, "tsconfig.json")
  want(
    !fs.existsSync(editorConfig) || readJson(editorConfig).compilerOptions?.paths === undefined,
    `tsconfig.json: drop "paths" (siblings resolve through their "@circuitry/source" export condition)`
  )
  for (const file of ["README.md", "CHANGELOG.md", "LICENSE", "vitest.config.ts"]) {
    want(fs.existsSync(path.join(pkg.dir, file)), `${file} is missing`)
  }

  for (const name of importsOf(path.join(pkg.dir, "src"))) {
    if (name === m.name) continue
    // A subpath import (#edition) resolves through the package's own "imports" field.
    if (name.startsWith("#")) {
      want(name in record("imports"), `src imports ${name}: map it in "imports"`)
      continue
    }
    if (mustBePeer(name)) {
      want(
        name in peers,
        `src imports ${name}: list it in "peerDependencies" (and pin the tested version in devDependencies)`
      )
    } else {
      want(name in deps || name in peers, `src imports ${name}, which no dependency declares`)
    }
  }
  for (const name of Object.keys(deps)) {
    want(!mustBePeer(name), `"dependencies" has ${name}: it must be a peer dependency`)
    want(!(name in peers), `${name} is listed twice (dependencies and peerDependencies)`)
  }
  for (const [name, range] of Object.entries(peers)) {
    const pinned = dev[name]
    if (name.startsWith("@circuitry/")) {
      want(range === "workspace:^", `peer ${name} must be "workspace:^" (pnpm pack writes the real range)`)
      want(pinned === "workspace:^", `devDependencies must have ${name}: "workspace:^" (the sibling tested here)`)
    } else {
      want(/^[\^>]/.test(range), `peer ${name}: "${range}" must be a range (^x.y.z)`)
      want(
        typeof pinned === "string" && /^\d+\.\d+\.\d+$/.test(pinned),
        `devDependencies must pin the tested ${name} exactly (x.y.z), got ${JSON.stringify(pinned)}`
      )
    }
  }
  for (const name of Object.keys(meta)) want(name in peers, `peerDependenciesMeta names ${name}, which is not a peer`)
  return out
}
