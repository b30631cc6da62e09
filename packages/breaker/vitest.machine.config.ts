// The tests Stryker runs against machine.ts's mutants in `stryker.machine.config.mjs`: its direct
// tests only (test/machine.test.ts). See test/MUTANTS.md for why, and for the figures.
import { defineProject } from "vitest/config"
import shared from "../../vitest.shared.js"

export default defineProject({ ...shared, test: { ...shared.test, include: ["test/machine.test.ts"] } })
