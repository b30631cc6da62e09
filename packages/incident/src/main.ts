/**
 * `pnpm start`: the incident replay. See `--help`, and docs/incident.md for the write-up.
 */
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Flags from "./Flags.js"
import * as Replay from "./Replay.js"
import * as Report from "./Report.js"
import * as Strategies from "./Strategies.js"
import * as Svg from "./Svg.js"

const parsed = Flags.parse(process.argv.slice(2))
if (Either.isLeft(parsed)) {
  console.error(`circuitry replay: ${parsed.left.message}\nRun with --help to see every flag.`)
  process.exit(2)
}
const command = parsed.right
if (command.help) {
  console.log(Flags.help)
  process.exit(0)
}

const { config } = command
const color = command.color ?? (process.stdout.isTTY === true && process.env.NO_COLOR === undefined)
// A relative --out is relative to where the command was typed (pnpm runs scripts in the package).
const out = path.resolve(
  process.env.INIT_CWD ?? process.cwd(),
  command.out ?? path.join(os.tmpdir(), "circuitry-incident-replay.svg")
)

console.log("circuitry: replaying the cache incident (seeds/repair-while-open) in virtual time\n")
console.log(Report.describe(config) + "\n")
for (const name of config.strategies) console.log(`  ${name.padEnd(14)} ${Strategies.descriptions[name]}`)
console.log("")

const started = performance.now()
const result = await Effect.runPromise(Replay.run(config))
const wall = (performance.now() - started) / 1000

console.log(Report.table(result, command.intervalSeconds) + "\n")
for (const metric of Report.metrics) {
  console.log(Report.chart(result, metric, { width: 100, height: 10, color }) + "\n")
}
console.log(Report.legend(result, color) + "\n")
console.log(Report.summary(result) + "\n")
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(out, Svg.render(result))
console.log(`chart written to ${out}`)
console.log(`${config.durationMillis / 1000} s of traffic replayed in ${wall.toFixed(1)} s`)
