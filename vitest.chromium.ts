/**
 * Global setup of the tests that render in a real browser (@circuitry/platform's health view,
 * @circuitry/incident's report: Debian's `chromium`, headless). When no Chromium is found, this
 * installs Debian's package with apt-get, and only what the browser needs: no recommended
 * packages but its fonts (on a shared machine they pulled in udev, avahi-daemon and printer tools,
 * and upgraded systemd with them), so nothing is upgraded but what a needed package's version
 * requires. apt's output goes to a log file; what was installed and upgraded is summed up in a
 * few lines. When it cannot install, the run fails here with what to do. The test is never skipped.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const found = (binary: string): boolean => spawnSync(binary, ["--version"], { stdio: "ignore" }).status === 0

/** What dpkg unpacked, from apt's output: each package new, and each upgraded (with the version it had). */
export const unpacked = (
  output: string
): { readonly installed: ReadonlyArray<string>; readonly upgraded: ReadonlyArray<string> } => {
  const installed: Array<string> = []
  const upgraded: Array<string> = []
  for (const line of output.split("\n")) {
    const match = /^Unpacking (\S+?)(?::\S+)? \(([^)]+)\)(?: over \(([^)]+)\))?/.exec(line)
    if (match === null) continue
    const [, name, version, before] = match
    if (before === undefined) installed.push(`${name} ${version}`)
    else upgraded.push(`${name} ${before} -> ${version}`)
  }
  return { installed, upgraded }
}

const list = (names: ReadonlyArray<string>, most = 8): string =>
  names.length <= most ? names.join(", ") : `${names.slice(0, most).join(", ")} and ${names.length - most} more`

export default function setup(): void {
  const binary = process.env.CHROMIUM ?? "chromium"
  if (found(binary)) return
  if (process.env.CHROMIUM !== undefined) {
    throw new Error(`CHROMIUM=${binary} does not run (\`${binary} --version\` failed): point it at a Chromium binary`)
  }
  const log = path.join(os.tmpdir(), `circuitry-chromium-apt-${Date.now()}.log`)
  console.log(
    "circuitry: the browser tests need Chromium and none is installed: installing Debian's chromium" +
      ` (apt-get install --no-install-recommends chromium; its output goes to ${log};` +
      " set CHROMIUM=/path/to/chromium to use another)"
  )
  const started = performance.now()
  try {
    const root = process.getuid?.() === 0 ? [] : ["sudo", "-n"]
    const run = (args: ReadonlyArray<string>) => {
      const [command, ...rest] = [...root, ...args]
      const out = fs.openSync(log, "a")
      try {
        execFileSync(command!, rest, {
          stdio: ["ignore", out, out],
          env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }
        })
      } finally {
        fs.closeSync(out)
      }
    }
    run(["apt-get", "update", "-q"])
    // fonts-liberation, one of chromium's recommends, is what renders the pages' text
    run([
      "apt-get",
      "install",
      "-y",
      "-q",
      "--no-install-recommends",
      "-o",
      "Dpkg::Use-Pty=0",
      "chromium",
      "fonts-liberation"
    ])
  } catch (error) {
    throw new Error(
      `could not install Chromium with apt-get (${(error as Error).message}; apt's output: ${log}): install` +
        " Debian's chromium (or any Chromium, with CHROMIUM=/path/to/chromium) and run the tests again"
    )
  }
  const { installed, upgraded } = unpacked(fs.readFileSync(log, "utf8"))
  const seconds = ((performance.now() - started) / 1000).toFixed(0)
  console.log(
    `circuitry: installed ${installed.length} packages in ${seconds} s (${list(installed)})` +
      (upgraded.length === 0 ? ", upgraded none" : `, upgraded ${upgraded.length} they need (${list(upgraded)})`) +
      `; apt's output: ${log}`
  )
  if (!found(binary)) throw new Error(`apt-get installed chromium, but \`chromium --version\` still fails (see ${log})`)
}
