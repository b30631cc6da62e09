// The Effect 4 run of the same sources (main.ts, with `--conditions=@circuitry/effect4`): loads
// them as register.mjs does, with every `effect` import resolved from editions/effect4 (effect 4),
// as editions/effect4/vitest.config.ts routes it for the tests.
import { register } from "node:module"

register("./hooks.mjs", import.meta.url, {
  data: { effect: new URL("../../../editions/effect4/package.json", import.meta.url).href }
})
