import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { generate, root, withoutAbsolutePaths } from "../src/apidocs.js"

describe("docs/api", () => {
  it("is what the generator writes from the sources now", { timeout: 120_000 }, async () => {
    const files = await generate()
    const stale: Array<string> = []
    for (const [file, content] of files) {
      const full = path.join(root, file)
      if (!fs.existsSync(full) || fs.readFileSync(full, "utf8") !== content) stale.push(file)
    }
    const dir = path.join(root, "docs/api")
    for (const file of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      if (file.endsWith(".md") && !files.has(`docs/api/${file}`)) stale.push(`docs/api/${file} (no such package)`)
    }
    assert.deepStrictEqual(stale, [], "docs/api is stale: run `pnpm --filter @circuitry/incident apidocs`")
  })

  it("names modules by package, never by a path of the machine that generated it", { timeout: 120_000 }, async () => {
    assert.strictEqual(
      withoutAbsolutePaths(
        'import("/home/ci/repo/node_modules/.pnpm/effect@3.22.4/node_modules/effect/dist/dts/Metric").Metric.Counter<number>'
      ),
      'import("effect/Metric").Metric.Counter<number>'
    )
    assert.strictEqual(
      withoutAbsolutePaths('import("/x/node_modules/@effect/platform/dist/dts/HttpApp").Default'),
      'import("@effect/platform/HttpApp").Default'
    )
    for (const [file, content] of await generate()) {
      assert.notInclude(content, 'import("/', `${file} names an absolute path`)
    }
  })

  it("documents every public module of every public package", { timeout: 120_000 }, async () => {
    const files = await generate()
    const breaker = files.get("docs/api/breaker.md") ?? ""
    for (const name of [
      "CircuitBreaker.make",
      "CircuitBreaker.withBreaker",
      "Policy.failureRate",
      "BreakerRegistry.layer"
    ]) {
      assert.include(breaker, `#### ${name}`)
    }
    // Internal modules and private packages are not part of the reference.
    assert.notInclude(breaker, "internal/")
    assert.isFalse(files.has("docs/api/incident.md"))
    assert.isFalse(files.has("docs/api/bench.md"))
  })
})
