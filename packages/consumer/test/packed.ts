/** The tarballs test/pack.setup.ts packs once for the consumer tests, and the wait for them. */
import * as fs from "node:fs"
import * as path from "node:path"
import { inject } from "vitest"

const dir = inject("packDir")

/** Where `pnpm release:pack` writes: `effect3/*.tgz` and `effect4/*.tgz`, once `waitForPack` resolves. */
export const tarballs = path.join(dir, "tarballs")

/** Waits until `pnpm release:pack` has ended; fails with its output when it failed or outlasted the limit. */
export const waitForPack = async (timeoutMinutes: number): Promise<void> => {
  const exit = path.join(dir, "exit")
  const deadline = Date.now() + timeoutMinutes * 60_000
  while (!fs.existsSync(exit)) {
    if (Date.now() > deadline) {
      throw new Error(`pnpm release:pack had not ended after this test's limit of ${timeoutMinutes} minutes`)
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
  const code = fs.readFileSync(exit, "utf8")
  if (code !== "0") {
    throw new Error(`pnpm release:pack failed (${code}):\n${fs.readFileSync(path.join(dir, "pack.log"), "utf8")}`)
  }
}
