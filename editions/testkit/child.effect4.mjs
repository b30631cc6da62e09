// The Effect 4 run's child processes (`childExecArgv` in testkit.effect4.ts) load this first: it
// registers child.effect4.resolve.mjs, which resolves every `effect` import from editions/effect4's
// install (effect 4), wherever the importing file is. Node's own rules would find effect 3 in the
// package's node_modules, as the vitest run's plugin does not let them.
import { register } from "node:module"

register("./child.effect4.resolve.mjs", import.meta.url)
