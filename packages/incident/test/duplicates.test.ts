/**
 * No package re-implements what another holds (issue 23): logic that two packages need lives once,
 * in `@circuitry/core` or the package that owns it. The scan (duplicateScan.ts) reads every
 * packages/*\/src/**\/*.ts file (not tests, not declaration files), and fails on a run of six or more
 * identical lines, comments, blank lines and imports aside, that stands in two packages. An
 * `.effect3.ts` file is not compared with an `.effect4.ts` one: they are never in one build.
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describeCopy, findCopies, normalise, type Source } from "./duplicateScan.js"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

/**
 * Pairs of files allowed to share runs, each with the reason: boilerplate only, never logic. An
 * entry that no longer matches anything fails the test too: remove it then.
 */
const allowed: ReadonlyArray<{ readonly a: string; readonly b: string; readonly reason: string }> = []

const walk = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return walk(full)
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : []
  })

const sources = (): Array<Source> =>
  fs
    .readdirSync(path.join(root, "packages"))
    .filter((pkg) => fs.existsSync(path.join(root, "packages", pkg, "src")))
    .flatMap((pkg) =>
      walk(path.join(root, "packages", pkg, "src")).map((file) => ({
        pkg,
        file: path.relative(root, file).split(path.sep).join("/"),
        text: fs.readFileSync(file, "utf8")
      }))
    )

const isAllowed = (a: string, b: string) =>
  allowed.some((entry) => (entry.a === a && entry.b === b) || (entry.a === b && entry.b === a))

describe("no logic in two packages", () => {
  const all = sources()
  const copies = findCopies(all)

  it("no run of six or more identical lines stands in two packages' sources", () => {
    assert.isAbove(all.length, 100, "the walk found the sources")
    const found = copies.filter((copy) => !isAllowed(copy.a.file, copy.b.file)).map(describeCopy)
    assert.deepStrictEqual(
      found,
      [],
      "give this logic one home (@circuitry/core, or the package that owns it) and import it"
    )
  })

  it("every allowed pair still shares a run (else remove it from the list)", () => {
    const stale = allowed.filter(
      ({ a, b }) => !copies.some((c) => (c.a.file === a && c.b.file === b) || (c.a.file === b && c.b.file === a))
    )
    assert.deepStrictEqual(stale, [])
  })
})

describe("the scanner", () => {
  const logic = `
export const backoff = (attempt: number, base: number): number => {
  const capped = Math.min(attempt, 10)
  const jitter = Math.random() * base
  const delay = base * 2 ** capped + jitter
  if (delay > 60_000) return 60_000
  if (delay < base) return base
  return Math.round(delay)
}
`
  /** The same logic as `logic`, in another package's dress: other comments, indentation, imports. */
  const copied = `import * as Effect from "effect/Effect"
import {
  Duration
} from "effect"

// retries wait longer each time
export const backoff = (attempt: number, base: number): number => {
    const capped = Math.min(attempt, 10) // at most 2^10
    /* spread the retries */ const jitter = Math.random() * base

    const delay = base * 2 ** capped + jitter
    if (delay > 60_000) return 60_000
    if (delay < base) return base
    return Math.round(delay)
}
`

  it("finds a run copied into another package, whatever its comments, blank lines and indentation", () => {
    const copies = findCopies([
      { pkg: "limiter", file: "packages/limiter/src/a.ts", text: logic },
      { pkg: "retry", file: "packages/retry/src/b.ts", text: copied }
    ])
    assert.strictEqual(copies.length, 1)
    const [copy] = copies
    assert.deepStrictEqual(copy!.a, { file: "packages/limiter/src/a.ts", from: 2, to: 8 })
    assert.deepStrictEqual(copy!.b, { file: "packages/retry/src/b.ts", from: 7, to: 14 })
    assert.strictEqual(copy!.lines.length, 7)
    assert.include(describeCopy(copy!), "packages/limiter/src/a.ts:2-8 ~ packages/retry/src/b.ts:7-14 (7 lines")
  })

  it("does not report a copy within one package, a run under six lines, or the other major's twin", () => {
    const five = logic.split("\n").slice(0, 6).join("\n") // the header and four lines of the body
    assert.deepStrictEqual(
      findCopies([
        { pkg: "retry", file: "packages/retry/src/a.ts", text: logic },
        { pkg: "retry", file: "packages/retry/src/b.ts", text: copied }
      ]),
      []
    )
    assert.deepStrictEqual(
      findCopies([
        { pkg: "limiter", file: "packages/limiter/src/a.ts", text: five },
        { pkg: "retry", file: "packages/retry/src/b.ts", text: copied }
      ]),
      []
    )
    assert.deepStrictEqual(
      findCopies([
        { pkg: "core", file: "packages/core/src/x.effect3.ts", text: logic },
        { pkg: "breaker", file: "packages/breaker/src/y.effect4.ts", text: logic }
      ]),
      []
    )
    assert.strictEqual(
      findCopies([
        { pkg: "core", file: "packages/core/src/x.effect3.ts", text: logic },
        { pkg: "breaker", file: "packages/breaker/src/y.effect3.ts", text: logic }
      ]).length,
      1
    )
  })

  it("a run with other names (the same shape) is not a copy", () => {
    const renamed = logic.replaceAll("delay", "wait").replaceAll("capped", "bounded")
    assert.deepStrictEqual(
      findCopies([
        { pkg: "limiter", file: "packages/limiter/src/a.ts", text: logic },
        { pkg: "retry", file: "packages/retry/src/b.ts", text: renamed }
      ]),
      []
    )
  })

  it("normalises: comments (not // inside a string), imports, blank lines and bare punctuation go", () => {
    const text = `import { a,
  b } from "x"
export * from "./y.js"
const url = "redis://host" // the server
/** doc
 * more */
  if  (ok)   {

})
`
    assert.deepStrictEqual(normalise(text), [
      { text: 'const url = "redis://host"', line: 4 },
      { text: "if (ok) {", line: 7 }
    ])
  })
})
