import { defineProject, mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.js"

// The HTML report's browser test needs Chromium: the global setup installs it when it is missing.
export default mergeConfig(shared, defineProject({ test: { globalSetup: ["../../vitest.chromium.ts"] } }))
