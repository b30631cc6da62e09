import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

/**
 * Runs the Debian `chromium` headless (CHROMIUM overrides the binary) and returns its stdout and
 * its stderr, where `--enable-logging=stderr` puts the page's console (uncaught errors included).
 */
export const chromium = (args: ReadonlyArray<string>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "circuitry-chromium-"))),
    (profile) =>
      Effect.async<{ readonly stdout: string; readonly stderr: string }, Error>((resume) => {
        execFile(
          process.env.CHROMIUM ?? "chromium",
          [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            `--user-data-dir=${profile}`,
            ...args
          ],
          { timeout: 30_000 },
          (error, stdout, stderr) =>
            resume(
              error === null
                ? Effect.succeed({ stdout, stderr })
                : Effect.fail(new Error(`chromium failed: ${error.message}\n${stderr.slice(-2000)}`))
            )
        )
      }),
    (profile) => Effect.sync(() => Fs.rmSync(profile, { recursive: true, force: true }))
  )

/** The page's console lines that Chromium logged (`INFO:CONSOLE`), e.g. uncaught errors. */
export const consoleLines = (stderr: string): Array<string> => stderr.split("\n").filter((l) => l.includes(":CONSOLE"))
