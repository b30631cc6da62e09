/**
 * No source file over 400 lines (issue 23): a module that grows past it is split by concept, one
 * owner per file, each file's header naming what it owns. Lines are counted as `wc -l` counts them.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const MAX_LINES = 400
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/**
 * Files over the limit while another change splits them, each with that change. An entry whose file
 * is back under the limit fails the test too: remove it then.
 */
const pending: ReadonlyMap<string, string> = new Map([])

const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return sources(full)
    return entry.name.endsWith(".ts") ? [full] : []
  })

const linesOf = (file: string): number => {
  const text = fs.readFileSync(file, "utf8")
  if (text === "") return 0
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0)
}

describe("source file sizes", () => {
  const files = fs
    .readdirSync(path.join(root, "packages"))
    .map((pkg) => path.join(root, "packages", pkg, "src"))
    .filter((src) => fs.existsSync(src))
    .flatMap(sources)
    .map((file) => ({ file: path.relative(root, file).split(path.sep).join("/"), lines: linesOf(file) }))

  it(`no packages/*/src/**/*.ts file is over ${MAX_LINES} lines`, () => {
    assert.isAbove(files.length, 100, "the walk found the sources")
    const over = files
      .filter(({ file, lines }) => lines > MAX_LINES && !pending.has(file))
      .map(({ file, lines }) => `${file}: ${lines} lines`)
    assert.deepStrictEqual(over, [], `split these by concept (one owner per file), at most ${MAX_LINES} lines each`)
  })

  it("every file listed as pending a split is still over the limit (else remove it from the list)", () => {
    const done = [...pending.keys()].filter((file) => (files.find((f) => f.file === file)?.lines ?? 0) <= MAX_LINES)
    assert.deepStrictEqual(done, [])
  })

  it("counts lines as wc -l does", () => {
    const dir = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? "/tmp"), "sizes-"))
    try {
      const file = path.join(dir, "a.ts")
      fs.writeFileSync(file, "a\nb\n")
      assert.strictEqual(linesOf(file), 2)
      fs.writeFileSync(file, "a\nb")
      assert.strictEqual(linesOf(file), 2)
      fs.writeFileSync(file, "")
      assert.strictEqual(linesOf(file), 0)
    } finally {
      fs.rmSync(dir, { recursive: true })
    }
  })
})
