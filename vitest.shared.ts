import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ViteUserConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))

// Each package's exports carry a "@circuitry/source" condition that points at its sources
// (./src/*.ts): resolving with it, tests run against the sources and never need a build step.
// The rest are vite's default server conditions (a `conditions` list replaces them) less "module",
// as Node resolves: with it, a run from a package folder loaded @opentelemetry/api's bundler-only
// ESM build (imports without file extensions), which Node cannot load.
const conditions = ["@circuitry/source", "node", "development|production"]

const config: ViteUserConfig = {
  esbuild: { target: "es2022" },
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    setupFiles: [path.join(root, "vitest.setup.ts")],
    include: ["test/**/*.test.ts"],
    // Tests for the other Effect major only run in its run (editions/effect4; docs/editions.md).
    exclude: ["**/node_modules/**", "**/dist/**", "test/**/*.effect4.test.ts"],
    // Node processes a test starts (`node --import tsx fixture.ts`) resolve the sources the same way.
    env: { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --conditions=@circuitry/source`.trim() },
    // Tests run against real servers on a 2-core machine that may be busy: time out late, never flake.
    testTimeout: 30_000,
    hookTimeout: 30_000
  }
}

export default config
