/**
 * Every public package has the release shape (exports for each module, files, peers, ...): a new
 * package fails here with the list of what to change, before the consumer test even packs it.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { problems, publicPackages, root } from "./packages.js"

const packages = publicPackages()

describe("package shape", () => {
  it("finds the public packages", () => {
    const names = packages.map((p) => p.manifest.name)
    for (const name of ["@circuitry/breaker", "@circuitry/cache", "@circuitry/redis", "@circuitry/sql"]) {
      assert.include(names, name)
    }
    assert.notInclude(names, "@circuitry/incident", "private packages are not published")
  })

  for (const pkg of packages) {
    it(`${pkg.manifest.name} has the release shape`, () => {
      const found = problems(pkg)
      assert.deepStrictEqual(found, [], `packages/${pkg.folder}/package.json:\n- ${found.join("\n- ")}\n`)
    })
  }

  it("a package in the shape of an unconverted one is told what to change", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-shape-"))
    try {
      fs.mkdirSync(path.join(dir, "src"))
      fs.writeFileSync(path.join(dir, "src", "Limiter.ts"), `import * as Effect from "effect/Effect"\n`)
      const paths = { "@circuitry/breaker": ["../breaker/src/index.ts"] }
      fs.writeFileSync(path.join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { paths } }))
      const found = problems({
        folder: "limiter",
        dir,
        modules: ["Limiter"],
        manifest: {
          name: "@circuitry/limiter",
          version: "0.1.0",
          type: "module",
          license: "MIT",
          exports: { ".": "./src/index.ts", "./*": "./src/*.ts", "./internal/*": null },
          dependencies: { "@circuitry/breaker": "workspace:*" },
          devDependencies: { effect: "3.22.4" }
        }
      })
      const said = (text: string) =>
        assert.isTrue(
          found.some((p) => p.includes(text)),
          `no problem mentions ${text}`
        )
      said(`"exports" must be exactly`)
      said(`"./Limiter": {`)
      said(`"files"`)
      said(`"sideEffects"`)
      said(`"dependencies" has @circuitry/breaker`)
      said(`src imports effect`)
      said("tsconfig.build.json")
      said("CHANGELOG.md is missing")
      said(`tsconfig.json: drop "paths"`)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("the shared TypeScript config maps no paths (they would win over the source condition)", () => {
    const base = JSON.parse(fs.readFileSync(path.join(root, "tsconfig.base.json"), "utf8"))
    assert.isUndefined(base.compilerOptions.paths, "tsconfig.base.json: drop paths")
    assert.deepStrictEqual(base.compilerOptions.customConditions, ["@circuitry/source"])
  })

  it("the README lists every public package", () => {
    const readme = fs.readFileSync(path.join(root, "README.md"), "utf8")
    for (const pkg of packages) {
      assert.include(
        readme,
        `[\`${pkg.manifest.name}\`](packages/${pkg.folder})`,
        `README.md does not list ${pkg.manifest.name}`
      )
    }
  })

  it("docs and package READMEs cite nothing a user does not have (no seeds/)", () => {
    const docs = path.join(root, "docs")
    const files = [
      "README.md",
      ...fs
        .readdirSync(docs, { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith(".md"))
        .map((f) => path.join("docs", f)),
      ...fs.readdirSync(path.join(root, "packages")).map((f) => path.join("packages", f, "README.md"))
    ].filter((f) => fs.existsSync(path.join(root, f)))
    const citing = files.filter((f) => /seeds\//.test(fs.readFileSync(path.join(root, f), "utf8")))
    assert.deepStrictEqual(citing, [], "these cite seeds/, which a user of the packages does not have")
  })
})
