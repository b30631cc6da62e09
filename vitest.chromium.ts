/**
 * Global setup of @circuitry/platform's tests: the health view is rendered by a real browser
 * (test/HealthRoute.test.ts runs Debian's `chromium` headless). When no Chromium is found, this
 * installs Debian's package with apt-get, saying so; when it cannot, the run fails here with what to
 * do. The test is never skipped.
 */
import { execFileSync, spawnSync } from "node:child_process"

const found = (binary: string): boolean => spawnSync(binary, ["--version"], { stdio: "ignore" }).status === 0

export default function setup(): void {
  const binary = process.env.CHROMIUM ?? "chromium"
  if (found(binary)) return
  if (process.env.CHROMIUM !== undefined) {
    throw new Error(`CHROMIUM=${binary} does not run (\`${binary} --version\` failed): point it at a Chromium binary`)
  }
  console.log(
    "@circuitry/platform: the health view's browser test needs Chromium and none is installed:" +
      " installing Debian's chromium (apt-get install chromium; set CHROMIUM=/path/to/chromium to use another)"
  )
  try {
    const root = process.getuid?.() === 0 ? [] : ["sudo", "-n"]
    const run = (args: ReadonlyArray<string>) => {
      const [command, ...rest] = [...root, ...args]
      execFileSync(command!, rest, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })
    }
    run(["apt-get", "update"])
    run(["apt-get", "install", "-y", "chromium"])
  } catch (error) {
    throw new Error(
      `could not install Chromium with apt-get (${(error as Error).message}): install Debian's chromium` +
        " (or any Chromium, with CHROMIUM=/path/to/chromium) and run the tests again"
    )
  }
  if (!found(binary)) throw new Error("apt-get installed chromium, but `chromium --version` still fails")
}
