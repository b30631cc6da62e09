// Loads TypeScript the way `tsc` emits it, for the measured child processes.
//
// tsx (esbuild with `keepNames`) wraps every named closure in `__name(fn, "name")`, which gives
// each closure a property table of its own: a few hundred bytes per closure, and a
// `defineProperty` call each time one is made. A compiled package has neither, so the benchmarks
// load the code through `typescript.transpileModule` instead.
import { register } from "node:module"

register("./hooks.mjs", import.meta.url)
