// @ts-nocheck
// Mutation testing of the core modules of @circuitry/cache (`pnpm mutate` here, or from the root).
import { strykerConfig } from "../../stryker.shared.mjs"

export default strykerConfig({ mutate: ["src/internal/guard.ts", "src/internal/loader.ts"] })
