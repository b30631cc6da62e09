import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { ViteUserConfig } from "vitest/config"

const root = path.dirname(fileURLToPath(import.meta.url))
const alias = (name: string) => ({
  [`@circuitry/${name}`]: path.join(root, "packages", name, "src")
})

// Every package resolves its siblings to their sources, so tests never need a build step.
const config: ViteUserConfig = {
  esbuild: { target: "es2022" },
  test: {
    setupFiles: [path.join(root, "vitest.setup.ts")],
    include: ["test/**/*.test.ts"],
    // Tests run against real servers on a 2-core machine that may be busy: time out late, never flake.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    alias: {
      ...alias("breaker"),
      ...alias("cache"),
      ...alias("redis"),
      ...alias("sql"),
      ...alias("platform"),
      ...alias("chaos")
    }
  }
}

export default config
