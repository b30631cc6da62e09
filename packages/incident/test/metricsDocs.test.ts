/**
 * docs/observability.md's table of metrics is the one the sources declare: every
 * `Metric.<type>("circuitry_...")` / `MetricKey.<type>("circuitry_...")` /
 * `MetricSeries.<type>(spec)` in packages/*\/src has a row with its type, and every row names a
 * declared metric. A counter's row promises it only goes up, so each declared counter must be
 * `incremental: true` (a Prometheus and OpenTelemetry counter; MetricSeries' counters are).
 */
import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { root } from "../src/apidocs.js"

interface Declared {
  readonly type: string
  readonly incremental: boolean
  readonly file: string
}

const sources = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? sources(full) : entry.name.endsWith(".ts") ? [full] : []
  })

const declared = (): Map<string, Declared> => {
  const found = new Map<string, Declared>()
  for (const folder of fs.readdirSync(path.join(root, "packages"))) {
    const src = path.join(root, "packages", folder, "src")
    if (!fs.existsSync(src)) continue
    // A metric's name and help declared once as a spec object (`export const calls: Spec = { name:
    // "circuitry_..." }`), which a constructor names (`MetricSeries.counter(Specs.calls)`,
    // `MetricSeries.counter(CALLS)`, `Metric.counter(Specs.calls.name, ...)`).
    const specNames = new Map<string, string>()
    for (const file of sources(src)) {
      const code = fs.readFileSync(file, "utf8")
      for (const m of code.matchAll(
        /\bconst ([A-Za-z_][A-Za-z0-9_]*)(?::[^=]*)? = \{\s*name: "(circuitry_[a-z0-9_]+)"/g
      )) {
        specNames.set(m[1]!, m[2]!)
      }
    }
    for (const file of sources(src)) {
      const code = fs.readFileSync(file, "utf8")
      const pattern =
        /\b(?:Metric|MetricKey)\.(counter|gauge|histogram|summary|frequency)\(\s*(?:"(circuitry_[a-z0-9_]+)"|Specs\.([a-z][A-Za-z0-9]*)\.name)/g
      // A metric made by core's MetricSeries from a spec: inline, a spec of Specs, or a spec constant.
      // Its counters are incremental (MetricSeries makes them so).
      const bySpec = [
        ...code.matchAll(
          /\b(?:Metric)?Series\.(counter|gauge|histogram)\(\s*(?:\{\s*name:\s*"(circuitry_[a-z0-9_]+)"|(?:Specs\.)?([A-Za-z_][A-Za-z0-9_]*)\s*\))/g
        )
      ].flatMap((m) => {
        const name = m[2] ?? specNames.get(m[3]!)
        return name === undefined ? [] : [{ type: m[1]!, name, incremental: m[1] === "counter" }]
      })
      const relative = path.relative(root, file)
      const declare = (name: string, here: Declared): void => {
        const previous = found.get(name)
        // The two edition files of one module (x.effect3.ts, x.effect4.ts) declare the same metric,
        // each for its major (the breaker's: Effect 3's own keys, Effect 4's MetricSeries): one
        // declaration, which must agree on both.
        const twin = (f: string) => f.replace(/\.effect[34]\.ts$/, "")
        if (previous !== undefined && twin(previous.file) === twin(relative)) {
          assert.deepStrictEqual([here.type, here.incremental], [previous.type, previous.incremental], name)
          return
        }
        assert.isUndefined(previous, `${name} is declared twice: ${previous?.file} and ${relative}`)
        found.set(name, here)
      }
      for (const spec of bySpec) {
        declare(spec.name, { type: spec.type, incremental: spec.incremental, file: relative })
      }
      for (const m of code.matchAll(pattern)) {
        const name = m[2] ?? specNames.get(m[3]!)
        assert.isDefined(name, `${relative}: no spec object named ${m[3]} declares a metric name`)
        // The options object that follows the name, up to its closing brace.
        const rest = code.slice(m.index! + m[0].length)
        const options = /^\s*,\s*\{([^}]*)\}/.exec(rest)?.[1] ?? ""
        declare(name, { type: m[1]!, incremental: /incremental:\s*true/.test(options), file: relative })
      }
    }
  }
  return found
}

const documented = (): Map<string, string> => {
  const text = fs.readFileSync(path.join(root, "docs", "observability.md"), "utf8")
  const rows = new Map<string, string>()
  for (const m of text.matchAll(/^\|\s*`(circuitry_[a-z0-9_]+)`\s*\|\s*([a-z]+)\s*\|/gm)) {
    assert.isFalse(rows.has(m[1]!), `docs/observability.md has two rows for ${m[1]}`)
    rows.set(m[1]!, m[2]!)
  }
  return rows
}

describe("the documented metrics", () => {
  const code = declared()
  const docs = documented()

  it("finds the metrics in the sources and in the docs", () => {
    // The breaker's four, the limiter's four, retry's three, at least.
    assert.isAtLeast(code.size, 11)
    assert.isAtLeast(docs.size, 11)
  })

  it("docs/observability.md has a row for every metric the sources declare, with its type, and no other", () => {
    const missing = [...code].filter(([name]) => !docs.has(name)).map(([name, d]) => `${name} (${d.file})`)
    assert.deepStrictEqual(missing, [], "declared but not in docs/observability.md's table")
    const stale = [...docs.keys()].filter((name) => !code.has(name))
    assert.deepStrictEqual(stale, [], "in docs/observability.md's table but declared nowhere")
    const wrongType = [...code]
      .filter(([name, d]) => docs.get(name) !== d.type)
      .map(([name, d]) => `${name}: declared ${d.type}, documented ${docs.get(name)}`)
    assert.deepStrictEqual(wrongType, [])
  })

  it("every counter only goes up (incremental), as its row says", () => {
    const decreasing = [...code].filter(([, d]) => d.type === "counter" && !d.incremental).map(([name]) => name)
    assert.deepStrictEqual(decreasing, [], "counters without incremental: true")
  })
})
