/**
 * `pnpm start`: the incident replays. See `--help`, and docs/incident.md for the write-up.
 */
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Flags from "./Flags.js"
import * as Html from "./Html.js"
import type { Outcome } from "./Incident.js"
import { incidents } from "./incidents.js"
import * as Report from "./Report.js"
import * as Svg from "./Svg.js"

const parsed = Flags.parse(process.argv.slice(2), incidents)
if (Either.isLeft(parsed)) {
  console.error(`circuitry replay: ${parsed.left.message}\nRun with --help to see every flag.`)
  process.exit(2)
}
const command = parsed.right
if (command.help) {
  console.log(Flags.help(incidents))
  process.exit(0)
}

const color = command.color ?? (process.stdout.isTTY === true && process.env.NO_COLOR === undefined)
// pnpm runs scripts in the package: a relative --out is relative to where the command was typed.
const out = Flags.outputFolder(command.out, process.env.INIT_CWD ?? process.cwd())
const bold = (s: string) => (color ? `\x1b[1m${s}\x1b[0m` : s)

const started = performance.now()
const outcomes: Array<Outcome> = []
for (const planned of command.incidents) {
  console.log(bold(`circuitry: replaying ${planned.name} in virtual time`) + "\n")
  console.log(planned.setup + "\n")
  const outcome = await Effect.runPromise(planned.run)
  outcomes.push(outcome)
  console.log(Report.table(outcome, command.intervalSeconds) + "\n")
  for (const panel of outcome.panels) console.log(Report.sparklines(outcome, panel, { width: 75, color }) + "\n")
  console.log(Report.verdicts(outcome, color) + "\n")
}
fs.mkdirSync(out, { recursive: true })
for (const outcome of outcomes) fs.writeFileSync(path.join(out, `${outcome.name}.svg`), Svg.render(outcome))
const report = path.join(out, "report.html")
fs.writeFileSync(report, Html.render(outcomes, { intervalSeconds: command.intervalSeconds }))
const wall = (performance.now() - started) / 1000
console.log(`charts and report written to ${out} (open ${report})`)
console.log(`${outcomes.length} incident${outcomes.length === 1 ? "" : "s"} replayed in ${wall.toFixed(1)} s`)
