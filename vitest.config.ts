import { defineConfig } from "vitest/config"

// One project per package; each package's vitest.config.ts merges vitest.shared.ts.
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts"]
  }
})
