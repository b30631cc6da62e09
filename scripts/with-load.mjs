// Runs a command while busy loops of our own keep the machine's cores busy, as other work does on a
// shared CI runner: a test that passes only on an idle machine fails here, where we can see it.
// The load is bounded: one busy process per core (or --workers N), at the command's own priority,
// for the command's duration and never past --max-minutes; the loops stop when the command ends,
// whatever way it ends, and the exit code is the command's.
//
//   node scripts/with-load.mjs [--workers N] [--max-minutes M] -- <command> [args...]
import { spawn } from "node:child_process"
import * as os from "node:os"

const args = process.argv.slice(2)
const split = args.indexOf("--")
if (split < 0 || split === args.length - 1) {
  console.error("usage: node scripts/with-load.mjs [--workers N] [--max-minutes M] -- <command> [args...]")
  process.exit(2)
}
const option = (name, fallback) => {
  const i = args.indexOf(name)
  if (i < 0 || i > split) return fallback
  const value = Number(args[i + 1])
  if (!Number.isFinite(value) || value <= 0) {
    console.error(`with-load: ${name} takes a number > 0, got ${JSON.stringify(args[i + 1])}`)
    process.exit(2)
  }
  return value
}
const workers = Math.floor(option("--workers", os.availableParallelism()))
const maxMillis = option("--max-minutes", 60) * 60_000
const [command, ...commandArgs] = args.slice(split + 1)

// Each loop checks the time now and then, so that it also ends by itself if this process is killed.
const loop = `const end = Date.now() + ${maxMillis}; for (;;) { for (let i = 0; i < 1e7; i++); if (Date.now() > end) break }`
const loops = Array.from({ length: workers }, () => spawn(process.execPath, ["-e", loop], { stdio: "ignore" }))
const stopLoops = () => {
  for (const child of loops) if (child.exitCode === null) child.kill("SIGKILL")
}
process.on("exit", stopLoops)
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
  process.on(signal, () => {
    stopLoops()
    process.exit(128 + os.constants.signals[signal])
  })
}

console.log(
  `with-load: ${workers} busy loop(s) on ${os.availableParallelism()} core(s), for at most ${maxMillis / 60_000} min, while: ${[command, ...commandArgs].join(" ")}`
)
const started = Date.now()
const child = spawn(command, commandArgs, { stdio: "inherit" })
child.on("exit", (code, signal) => {
  stopLoops()
  const minutes = ((Date.now() - started) / 60_000).toFixed(1)
  console.log(`with-load: the command ended (${signal ?? `exit ${code}`}) after ${minutes} min under load`)
  process.exit(code ?? 1)
})
