/**
 * A full garbage collection: `global.gc` under `--expose-gc` (as `pnpm bench` runs), or one
 * obtained by turning the flag on at run time (as under a test runner).
 */
import * as v8 from "node:v8"
import * as vm from "node:vm"

const obtain = (): (() => void) => {
  const exposed = (globalThis as { gc?: () => void }).gc
  if (exposed !== undefined) return exposed
  v8.setFlagsFromString("--expose-gc")
  return vm.runInNewContext("gc") as () => void
}

export const gc: () => void = obtain()
