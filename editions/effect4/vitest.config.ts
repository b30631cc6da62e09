// The Effect 4 run: the same test files as the root run (vitest.shared.ts), for the packages ported to
// one source on both majors (./ported.ts), with `effect` and `@effect/vitest` taken from this folder's
// install (effect 4, @effect/vitest 4) and the "@circuitry/effect4" condition choosing each edition file.
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig, defineProject, mergeConfig, type Plugin } from "vitest/config"
import shared from "../../vitest.shared.js"
import { ported } from "./ported.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")

/** A file of this folder: bare imports resolved from it find this folder's node_modules. */
const anchor = path.join(here, "vitest.config.ts")
/** The packages that differ per major: one copy of each, the one installed here. */
const perMajor = /^(effect|@effect\/vitest|@effect\/platform-node|@effect\/sql-pg|@effect\/opentelemetry)(\/|$)/

const effect4: Plugin = {
  name: "circuitry:effect4",
  enforce: "pre",
  resolveId(source, importer, options) {
    if (!perMajor.test(source) || importer === anchor) return null
    return this.resolve(source, anchor, { ...options, skipSelf: true })
  }
}

const conditions = ["@circuitry/effect4", ...(shared.resolve!.conditions as Array<string>)]

/** The global setups a package's own vitest config has (platform's installs Chromium for its browser test). */
const globalSetup: Record<string, Array<string>> = { platform: [path.join(root, "vitest.chromium.ts")] }

export default defineConfig({
  test: {
    projects: ported.map((pkg) =>
      mergeConfig(
        // The shared exclude leaves out the Effect 4 test files (mergeConfig would add to it): here
        // they run, and the Effect 3 ones are left out.
        { ...shared, test: { ...shared.test, exclude: [] } },
        defineProject({
          root: path.join(root, "packages", pkg),
          plugins: [effect4],
          resolve: { conditions },
          ssr: { resolve: { conditions } },
          test: {
            name: `${pkg} (effect 4)`,
            exclude: ["**/node_modules/**", "**/dist/**", "test/**/*.effect3.test.ts"],
            ...(globalSetup[pkg] === undefined ? {} : { globalSetup: globalSetup[pkg] }),
            env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --conditions=@circuitry/source`.trim() }
          }
        })
      )
    )
  }
})
