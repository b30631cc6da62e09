// Builds a public package for one Effect edition, in the shape Effect's packages ship:
// - dist/esm: ES modules, .d.ts and declaration maps (tsc, tsconfig.build.json);
// - dist/cjs (Effect 3 only): the same modules as CommonJS (tsc again, emitting JavaScript only), a
//   package.json that marks the folder CommonJS, and a copy of the .d.ts files, so that `require`
//   gets types that TypeScript reads as CommonJS (under node16 an ESM .d.ts cannot be required).
//   effect 4 is ESM only, and so is its edition: `require` of it is Node's require(esm).
//
// Edition 3 (the default; `pnpm build` at the root runs it in every public package, dependencies
// first) builds into the package's own dist/, from its sources less the Effect 4 files
// (*.effect4.ts). Edition 4 builds a whole package folder in <package>/.tmp/effect4 (package.json,
// dist/, src/, README, LICENSE, CHANGELOG) from the sources less the Effect 3 files, against
// editions/effect4's effect and the Effect 4 builds of its @circuitry siblings (build those first),
// ready for `npm pack`. See docs/editions.md.
//
//   node ../../scripts/build-package.mjs                  (in a package folder: edition 3, dist/)
//   node ../../scripts/build-package.mjs --edition 4      (edition 4, .tmp/effect4)
//   import { buildEdition } from "./scripts/build-package.mjs"; buildEdition(dir, 4) // its folder
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { editionVersion } from "./release-versions.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const run = (args) => execFileSync(process.execPath, [tsc, ...args], { stdio: "inherit" })
const readJson = (file) => JSON.parse(fs.readFileSync(file, "utf8"))
const writeJson = (file, value) => fs.writeFileSync(file, JSON.stringify(value, null, 2) + "\n")

/** The effect install of each edition: the root's for 3, editions/effect4's for 4. */
const effectOf = (edition) =>
  edition === 3 ? path.join(root, "node_modules/effect") : path.join(root, "editions/effect4/node_modules/effect")

/**
 * The `@effect/*` peers of an edition 4 package: a package folded into effect 4 is dropped (its
 * modules are effect's own, `@effect/platform`'s HTTP modules are `effect/http`), another peers on
 * the version editions/effect4 builds and tests against. A peer not listed has no Effect 4 range
 * known here, and the build refuses it.
 */
const effect4Peers = {
  "@effect/platform": { folded: true },
  "@effect/platform-node": { folded: false },
  // effect/sql and effect/reactivity
  "@effect/sql": { folded: true },
  "@effect/experimental": { folded: true },
  "@effect/sql-pg": { folded: false }
}

/** The install of an `@effect/*` package an edition 4 build compiles against: editions/effect4's. */
const effect4PeerDir = (name) => path.join(root, "editions/effect4/node_modules", name)

/** The folder an edition of the package in `dir` is built in. */
export const editionDir = (dir, edition) => (edition === 3 ? dir : path.join(dir, ".tmp", `effect${edition}`))

/**
 * The package.json an edition ships: the edition's version (release-versions.mjs), the peer `effect`
 * range of its major, and its siblings at the same edition's version.
 */
const manifestFor = (manifest, edition) => {
  const effect = readJson(path.join(effectOf(edition), "package.json")).version
  const folded = (name) => edition !== 3 && effect4Peers[name]?.folded === true
  const peers = Object.fromEntries(
    Object.entries(manifest.peerDependencies ?? {}).flatMap(([name, range]) => {
      // Effect 3: the repository's range (3.22+), which the Effect 3 edition has always had.
      if (name === "effect") return [[name, edition === 3 ? range : `^${effect}`]]
      if (name.startsWith("@circuitry/")) {
        const sibling = readJson(path.join(root, "packages", name.slice("@circuitry/".length), "package.json"))
        return [[name, `^${editionVersion(sibling.version, edition)}`]]
      }
      if (edition !== 3 && name.startsWith("@effect/")) {
        if (effect4Peers[name] === undefined) {
          throw new Error(`${manifest.name}: no Effect ${edition} range is known for the peer ${name}`)
        }
        if (folded(name)) return []
        return [[name, `^${readJson(path.join(effect4PeerDir(name), "package.json")).version}`]]
      }
      return [[name, range]]
    })
  )
  const peersMeta = Object.fromEntries(
    Object.entries(manifest.peerDependenciesMeta ?? {}).filter(([name]) => !folded(name))
  )
  const {
    devDependencies: _dev,
    scripts: _scripts,
    imports: _imports,
    peerDependenciesMeta: _peersMeta,
    ...rest
  } = manifest
  // Effect 4 is ESM only, and so is this edition: `require` of it is Node's require(esm), as of effect.
  const esmOnly = (entry) =>
    typeof entry === "object" && entry !== null && entry.import !== undefined
      ? { types: entry.import.types, default: entry.import.default }
      : entry
  // Effect 3: ESM and CommonJS; the "@circuitry/source" condition (src/*.ts) is the repository's only.
  const built = (entry) =>
    typeof entry === "object" && entry !== null
      ? Object.fromEntries(Object.entries(entry).filter(([condition]) => condition !== "@circuitry/source"))
      : entry
  const exports = Object.fromEntries(
    Object.entries(manifest.exports).map(([key, entry]) => [key, edition === 3 ? built(entry) : esmOnly(entry)])
  )
  return {
    ...rest,
    version: editionVersion(manifest.version, edition),
    ...(edition === 3
      ? {}
      : { main: "./dist/esm/index.js", module: "./dist/esm/index.js", types: "./dist/esm/index.d.ts" }),
    exports,
    peerDependencies: peers,
    ...(Object.keys(peersMeta).length === 0 ? {} : { peerDependenciesMeta: peersMeta })
  }
}

/** The package.json the edition for Effect `edition` of the package in `dir` ships (release-pack.mjs). */
export const editionManifest = (dir, edition) => manifestFor(readJson(path.join(dir, "package.json")), edition)

/** Path mappings that make tsc see one edition: its effect, and the siblings' builds of it. */
const pathsFor = (manifest, edition) => {
  if (edition === 3) return undefined
  const effect = effectOf(edition)
  const paths = { effect: [path.join(effect, "dist/index.d.ts")], "effect/*": [path.join(effect, "dist/*.d.ts")] }
  for (const name of Object.keys(manifest.peerDependencies ?? {})) {
    if (effect4Peers[name]?.folded === false) {
      // The package's own install is its Effect 3 version: compile against editions/effect4's.
      paths[name] = [path.join(effect4PeerDir(name), "dist/index.d.ts")]
      paths[`${name}/*`] = [path.join(effect4PeerDir(name), "dist/*.d.ts")]
    }
    if (!name.startsWith("@circuitry/")) continue
    const dist = path.join(editionDir(path.join(root, "packages", name.slice("@circuitry/".length)), edition), "dist")
    if (!fs.existsSync(dist)) throw new Error(`${manifest.name}: build ${name} for Effect ${edition} first`)
    paths[name] = [path.join(dist, "esm/index.d.ts")]
    paths[`${name}/*`] = [path.join(dist, "esm/*.d.ts")]
  }
  return paths
}

/** Builds the package in `dir` for Effect `edition` (3 or 4); returns the folder it is in. */
export const buildEdition = (dir, edition = 3) => {
  if (edition !== 3 && edition !== 4) throw new Error(`edition must be 3 or 4, got ${edition}`)
  const other = edition === 3 ? 4 : 3
  const manifest = readJson(path.join(dir, "package.json"))
  const out = editionDir(dir, edition)
  fs.rmSync(path.join(out, "dist"), { recursive: true, force: true })
  if (edition !== 3) {
    fs.rmSync(out, { recursive: true, force: true })
    fs.mkdirSync(out, { recursive: true })
    // The sources the maps point at: this edition's files only.
    fs.cpSync(path.join(dir, "src"), path.join(out, "src"), {
      recursive: true,
      filter: (file) => !file.endsWith(`.effect${other}.ts`)
    })
    linkSubpathImports(manifest, edition, path.join(out, "src"))
    for (const file of ["README.md", "LICENSE", "CHANGELOG.md"]) {
      if (fs.existsSync(path.join(dir, file))) fs.copyFileSync(path.join(dir, file), path.join(out, file))
    }
    writeJson(path.join(out, "package.json"), manifestFor(manifest, edition))
  }
  // In the package folder it builds, so that tsc reads the "imports" of that folder's package.json as
  // pointing at the sources it compiles (for files not yet written to dist/).
  const config = edition === 3 ? path.join(dir, ".tmp", "tsconfig.effect3.json") : path.join(out, "tsconfig.build.json")
  fs.mkdirSync(path.dirname(config), { recursive: true })
  const paths = pathsFor(manifest, edition)
  writeJson(config, {
    extends: path.join(root, "tsconfig.build.json"),
    compilerOptions: {
      rootDir: path.join(out, "src"),
      outDir: path.join(out, "dist/esm"),
      ...(paths === undefined ? {} : { paths })
    },
    include: [path.join(out, "src")],
    exclude: [path.join(out, "src", `**/*.effect${other}.ts`)]
  })
  run(["-p", config])
  const esm = path.join(out, "dist/esm")
  if (edition === 3) {
    // The sources were typechecked by the first run; this one only changes the module format.
    run([
      ...["-p", config, "--outDir", path.join(out, "dist/cjs"), "--module", "commonjs", "--moduleResolution", "node10"],
      ...["--customConditions", "null"],
      ...["--declaration", "false", "--declarationMap", "false", "--noCheck"]
    ])
    // Bundlers read sideEffects from the nearest package.json, which for dist/cjs is this one.
    writeJson(path.join(out, "dist/cjs/package.json"), { type: "commonjs", sideEffects: [] })
    for (const file of fs.readdirSync(esm, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".d.ts") && !file.endsWith(".d.ts.map")) continue
      fs.mkdirSync(path.dirname(path.join(out, "dist/cjs", file)), { recursive: true })
      fs.copyFileSync(path.join(esm, file), path.join(out, "dist/cjs", file))
    }
  }
  if (edition === 3)
    for (const format of ["esm", "cjs"]) linkSubpathImports(manifest, edition, path.join(out, "dist", format))
  return out
}

/**
 * Rewrites the package's subpath imports (`#edition`) in the files of `tree` (its sources or a
 * build of them) to relative paths to this edition's file: dist/cjs has a package.json of its own,
 * which Node and TypeScript would read them from, and a relative import needs no "imports" field in
 * what ships.
 */
const linkSubpathImports = (manifest, edition, tree) => {
  if (!fs.existsSync(tree)) return
  for (const [name, target] of Object.entries(manifest.imports ?? {})) {
    const file = (target[`@circuitry/effect${edition}`] ?? target["@circuitry/source"])
      .replace(/^\.\/src\//, "")
      .replace(/\.ts$/, ".js")
    for (const rel of fs.readdirSync(tree, { recursive: true, encoding: "utf8" })) {
      if (!/\.(js|ts)$/.test(rel)) continue
      const full = path.join(tree, rel)
      const code = fs.readFileSync(full, "utf8")
      if (!code.includes(`"${name}"`)) continue
      let relative = path.relative(path.dirname(full), path.join(tree, file))
      if (!relative.startsWith(".")) relative = `./${relative}`
      fs.writeFileSync(full, code.replaceAll(`"${name}"`, JSON.stringify(relative)))
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  const flag = process.argv.indexOf("--edition")
  buildEdition(process.cwd(), flag === -1 ? 3 : Number(process.argv[flag + 1]))
}
