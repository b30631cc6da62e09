import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"

describe("README", () => {
  // The example runs on Effect 3 only for now (it needs @circuitry/breaker); this check runs on both.
  it("shows test/readme.effect3.test.ts verbatim, so the example in it is one that runs", () => {
    const readme = fs.readFileSync(new URL("../README.md", import.meta.url), "utf8")
    const test = fs.readFileSync(new URL("./readme.effect3.test.ts", import.meta.url), "utf8")
    assert.include(readme, "```ts\n" + test + "```\n")
  })
})
