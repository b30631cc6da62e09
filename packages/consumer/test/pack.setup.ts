/**
 * Packs both editions once for the consumer tests, as a release does (`pnpm release:pack`), into a
 * temp folder that consumer.test.ts (Effect 3 and both editions' manifests) and edition4.test.ts
 * (the Effect 4 edition in apps on effect 4) both read. It starts here, in the background, so the
 * run's other tests go on while it packs (minutes at load; over 20 at load 40-48), and each test
 * file waits for it in its `beforeAll` (./packed.ts). Before, each file built the Effect 4 edition
 * itself: the work done twice, and two builds writing the same packages/<pkg>/.tmp folders at once.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { root } from "./packages.js"
import { env } from "./run.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The folder `pnpm release:pack` writes (./packed.ts reads it). */
    readonly packDir: string
  }
}

export default function setup(project: TestProject) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-packed-"))
  const log = fs.openSync(path.join(dir, "pack.log"), "w")
  const child = spawn("npx", ["-y", "pnpm@10.34.9", "release:pack", path.join(dir, "tarballs")], {
    cwd: root,
    env,
    stdio: ["ignore", log, log]
  })
  child.on("exit", (code, signal) => {
    fs.closeSync(log)
    fs.writeFileSync(path.join(dir, "exit"), signal ?? String(code))
  })
  project.provide("packDir", dir)
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
    await fs.promises.rm(dir, { recursive: true, force: true })
  }
}
