// The tests Stryker runs against tracker.ts's mutants in `stryker.tracker.config.mjs`: its direct
// tests only (test/tracker.test.ts). See test/MUTANTS.md for why, and for the figures.
import { defineProject } from "vitest/config"
import shared from "../../vitest.shared.js"

export default defineProject({ ...shared, test: { ...shared.test, include: ["test/tracker.test.ts"] } })
