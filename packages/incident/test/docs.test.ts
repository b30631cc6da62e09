/**
 * Every ```ts block in docs/**\/*.md, the packages' README.md files and the root README.md is
 * typechecked against the sources (`@circuitry/*` resolves through each package's
 * "@circuitry/source" export condition), so no example can rot. A block fenced as ```ts no-check is skipped.
 * A block fenced as ```ts effect4 is written for Effect 4 and typechecked against it: effect from
 * editions/effect4 and the "@circuitry/effect4" condition first, as that edition's own typecheck does
 * (docs/editions.md).
 */
import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"
import { root } from "../src/apidocs.js"
import { type Block, extract, markdownFiles } from "./docs.js"

const files = markdownFiles(root)
const blocks: Array<Block> = files.flatMap((file) => extract(root, file))
const checked = blocks.filter((block) => !block.skip)

/**
 * Each block becomes a module of its own in a git-ignored folder inside the repository
 * (packages/<pkg>/.tmp/docs-<pid>), in a package whose dependencies include what the block
 * imports: third-party imports resolve from the folder the file is in.
 */
const packagesDir = path.join(root, "packages")
const resolves = (dir: string, specifier: string): boolean => {
  const name = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!
  // A package imports itself by its own name, through its exports.
  if (JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).name === name) return true
  for (let d = dir; d.startsWith(root); d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, "node_modules", name))) return true
  }
  return false
}
const homeOf = (block: Block): string => {
  const imports = [...block.code.matchAll(/from\s+"([^".][^"]*)"/g)].map((m) => m[1]!)
  const needed = imports.filter((s) => !s.startsWith("node:"))
  const candidates = [
    ...imports.filter((s) => s.startsWith("@circuitry/")).map((s) => s.split("/")[1]!),
    /^docs\/([a-z-]+)\.md$/.exec(block.file)?.[1],
    /^packages\/([a-z-]+)\/README\.md$/.exec(block.file)?.[1],
    "incident"
  ].filter((name): name is string => name !== undefined && fs.existsSync(path.join(packagesDir, name, "package.json")))
  const home = candidates.find((name) => needed.every((s) => resolves(path.join(packagesDir, name), s)))
  return home ?? "incident"
}

const diagnostics = async (): Promise<Map<Block, Array<string>>> => {
  const folders = new Set<string>()
  const byFile = new Map<string, Block>()
  checked.forEach((block, i) => {
    const folder = path.join(packagesDir, homeOf(block), ".tmp", `docs-${process.pid}`)
    if (!folders.has(folder)) {
      fs.rmSync(folder, { recursive: true, force: true })
      fs.mkdirSync(folder, { recursive: true })
      folders.add(folder)
    }
    const name = `${block.file.replace(/[^A-Za-z0-9]+/g, "_")}_L${block.line}_${i}.ts`
    const file = path.join(folder, name)
    // `export {}` keeps each block a module, so that blocks never see each other's names.
    fs.writeFileSync(file, block.code + "\nexport {}\n")
    byFile.set(path.normalize(file), block)
  })
  try {
    return await check(byFile)
  } finally {
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true })
  }
}

/** What a block written for Effect 4 is checked with, added to the shared options. */
const effect4 = path.join(root, "editions", "effect4", "node_modules", "effect", "dist")
const sqlPg4 = path.join(root, "editions", "effect4", "node_modules", "@effect", "sql-pg", "dist")
const effect4Options: ts.CompilerOptions = {
  customConditions: ["@circuitry/effect4", "@circuitry/source"],
  paths: {
    effect: [path.join(effect4, "index.d.ts")],
    "effect/*": [path.join(effect4, "*.d.ts")],
    "@effect/sql-pg": [path.join(sqlPg4, "index.d.ts")],
    "@effect/sql-pg/*": [path.join(sqlPg4, "*.d.ts")]
  }
}

interface Diagnostic {
  readonly file: string
  readonly line: number
  readonly code: number
  readonly message: string
}

/** The programs' diagnostics, from typecheck.child.mjs: the compile runs in a process of its own. */
const typecheck = (programs: ReadonlyArray<{ files: Array<string>; options: ts.CompilerOptions }>) =>
  new Promise<Array<Diagnostic>>((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [fileURLToPath(new URL("typecheck.child.mjs", import.meta.url))],
      { maxBuffer: 256 << 20 },
      (error, stdout, stderr) =>
        error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout))
    )
    child.stdin!.end(JSON.stringify(programs))
  })

const check = async (byFile: Map<string, Block>): Promise<Map<Block, Array<string>>> => {
  const config = ts.readConfigFile(path.join(root, "tsconfig.base.json"), (p) => ts.sys.readFile(p))
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, root).options
  const programs = ([3, 4] as const).flatMap((edition) => {
    const files = [...byFile].filter(([, block]) => block.edition === edition).map(([file]) => file)
    // An example shows values it does not go on to use.
    const checkOptions = {
      ...options,
      ...(edition === 4 ? effect4Options : {}),
      noUnusedLocals: false,
      noUnusedParameters: false,
      noEmit: true
    }
    return files.length === 0 ? [] : [{ files, options: checkOptions }]
  })
  const found = new Map<Block, Array<string>>()
  for (const diagnostic of await typecheck(programs)) {
    const block = byFile.get(path.normalize(diagnostic.file))
    if (block === undefined) continue
    const list = found.get(block) ?? []
    list.push(`${block.file}:${block.line + 1 + diagnostic.line}: TS${diagnostic.code} ${diagnostic.message}`)
    found.set(block, list)
  }
  return found
}

describe("code blocks in the docs", () => {
  it("finds the docs and their blocks", () => {
    assert.include(files, "README.md")
    assert.isTrue(files.some((file) => file.startsWith("docs/")))
    assert.isAbove(checked.length, 0)
    assert.isTrue(
      checked.some((block) => block.edition === 4),
      "no block is checked against Effect 4"
    )
  })

  // One program for every block (a program per block would take minutes), then one test per file.
  // The first file's test builds both programs (194 s at load 43 on 2 cores, 2026-12-06).
  // Its time limit only catches a hang.
  let found: Promise<Map<Block, Array<string>>> | undefined
  const errorsOf = async (file: string) => {
    found ??= diagnostics()
    const all = await found
    return checked.filter((block) => block.file === file).flatMap((block) => all.get(block) ?? [])
  }
  for (const file of files.filter((file) => checked.some((block) => block.file === file))) {
    it(`${file} compiles`, { timeout: 600_000 }, async () => {
      const errors = await errorsOf(file)
      assert.deepStrictEqual(errors, [], `\n${errors.join("\n")}`)
    })
  }
})
