import { assert } from "@circuitry/testkit"
import * as Edition from "@circuitry/core/Edition"
import * as Effect from "effect/Effect"
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Runs the Debian `chromium` headless (CHROMIUM overrides the binary) and returns its stdout and
 * its stderr, where `--enable-logging=stderr` puts the page's console (uncaught errors included).
 */
export const chromium = (args: ReadonlyArray<string>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "circuitry-chromium-"))),
    (profile) =>
      Edition.callback<{ readonly stdout: string; readonly stderr: string }, Error>((resume) => {
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

/**
 * Screenshots `url` at `width`x`height` into packages/platform/.tmp/`name` and checks the file:
 * a PNG of that size, and not blank (a blank page this size compresses to a few kB; tables with
 * their text are several times that).
 */
export const screenshot = (
  url: string,
  name: string,
  size: { readonly width: number; readonly height: number },
  args: ReadonlyArray<string> = []
) =>
  Effect.gen(function* () {
    const dir = fileURLToPath(new URL("../.tmp/", import.meta.url))
    Fs.mkdirSync(dir, { recursive: true })
    const file = Path.join(dir, name)
    Fs.rmSync(file, { force: true })
    yield* chromium([
      ...args,
      `--screenshot=${file}`,
      `--window-size=${size.width},${size.height}`,
      "--hide-scrollbars",
      url
    ])
    const png = Fs.readFileSync(file)
    assert.deepStrictEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
    assert.deepStrictEqual([png.readUInt32BE(16), png.readUInt32BE(20)], [size.width, size.height]) // IHDR
    assert.isAbove(png.length, 12_000)
    return file
  })
