import { assert, describe, it } from "@effect/vitest"
import * as fs from "node:fs"

describe("README", () => {
  it("shows test/readme.test.ts verbatim, so the example in it is one that runs", () => {
    const readme = fs.readFileSync(new URL("../README.md", import.meta.url), "utf8")
    const test = fs.readFileSync(new URL("./readme.test.ts", import.meta.url), "utf8")
    assert.include(readme, "```ts\n" + test + "```\n")
  })
})
