import { assert, describe, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ported } from "../../../editions/effect4/ported.js"
import { majors } from "../src/editions.js"
import { calibrate, limitFor } from "../src/limits.js"
import { parse } from "../src/protocol.js"

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

/** A group run as `pnpm bench` runs it on `major`, at a small scale. */
const child = (flags: ReadonlyArray<string>, group: string, timeout: number) =>
  new Promise<string>((resolve, reject) =>
    execFile(
      process.execPath,
      ["--expose-gc", ...flags, path.join(pkg, "src", "child.ts"), group],
      {
        cwd: pkg,
        timeout,
        env: { ...process.env, NODE_OPTIONS: "--conditions=@circuitry/source", BENCH_SCALE: "0.01" }
      },
      (error, stdout, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(stdout))
    )
  )

// A child loads effect and the sources before it measures: its time limit is sized to the machine
// as pnpm bench sizes its groups' (limits.ts), from 60 s on a quiet machine.
const limit = limitFor(60_000, await calibrate())

describe("majors", () => {
  it("Effect 3 runs every package's groups; Effect 4 those of the packages in editions/effect4/ported.ts", () => {
    const [three, four] = majors
    assert.deepStrictEqual([three!.major, four!.major], [3, 4])
    for (const p of ["breaker", "retry", "limiter", "cache", "redis", "sql"]) {
      assert.isTrue(three!.runs(p))
      assert.strictEqual(four!.runs(p), ported.includes(p), p)
    }
    assert.isTrue(four!.runs("breaker"))
  })

  for (const major of majors) {
    it(
      `a group's child on Effect ${major.major} loads that major and measures every row`,
      async () => {
        const result = parse(await child(major.flags, "retry", limit))
        assert.isDefined(result)
        assert.strictEqual(result!.major, major.major)
        assert.strictEqual(result!._tag, "Timed")
        const ids = result!._tag === "Timed" ? result!.rows.map((r) => r.id) : []
        assert.includeMembers(ids, ["effect-retry", "retry-budget"])
        if (result!._tag === "Timed") for (const r of result!.rows) assert.isAbove(r.samples.length, 0, r.id)
      },
      limit + 5_000
    )
  }
})
