/**
 * One scenario group in its own process: `node --expose-gc --import tsx src/child.ts <group> [arg]`.
 * Prints its result as one JSON line after a marker (see protocol.ts), with the Effect major the
 * sources were loaded for (main.ts checks it).
 */
import { major } from "@circuitry/core/Edition"
import * as burst from "./groups/burst.js"
import * as closed from "./groups/closed.js"
import * as limiter from "./groups/limiter.js"
import * as memory from "./groups/memory.js"
import * as registry from "./groups/registry.js"
import * as rejection from "./groups/rejection.js"
import * as retry from "./groups/retry.js"
import type { GroupResult } from "./protocol.js"
import { report } from "./protocol.js"

const groups: Record<string, (arg: string | undefined) => Promise<GroupResult>> = {
  "in-fiber": () => closed.run("in-fiber"),
  "per-call": () => closed.run("per-call"),
  rejection: () => rejection.run(),
  registry: () => registry.run(),
  burst: () => burst.run(),
  retry: () => retry.run("retry"),
  hedging: () => retry.run("hedging"),
  memory: (arg) => memory.run(arg ?? "", Number(process.argv[4] ?? "1")),
  limiter: () => limiter.admitted(),
  "limiter-rejection": () => limiter.rejected(),
  "limiter-memory": () => limiter.memory(1)
}

const [name, arg] = process.argv.slice(2)
const group = name === undefined ? undefined : groups[name]
if (group === undefined) {
  process.stderr.write(`unknown group ${name}; one of ${Object.keys(groups).join(", ")}\n`)
  process.exit(2)
}
report({ ...(await group(arg)), major })
// opossum and others may leave timers behind: the result is out, so stop here.
process.exit(0)
