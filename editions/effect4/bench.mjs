// The hot paths of the ported packages on both majors, in one run: the built editions (build them
// first: scripts/build-package.mjs in packages/core and packages/retry, with and without
// `--edition 4`), each loaded by plain node from a folder whose node_modules link that edition's
// effect and retry build. The Effect 4 builds get node_modules of their own for the time of the run
// (effect 4, the Effect 4 core), since the folders above them resolve to Effect 3. Rounds alternate
// the majors; each round times every case in a fresh process. Prints the median ns per call of each
// case on each major and the ratios. See docs/editions.md.
//
//   node editions/effect4/bench.mjs [rounds]
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, "../..")
const rounds = Number(process.argv[2] ?? 7)

const editions = {
  3: {
    effect: path.join(root, "node_modules/effect"),
    core: path.join(root, "packages/core"),
    retry: path.join(root, "packages/retry")
  },
  4: {
    effect: path.join(here, "node_modules/effect"),
    core: path.join(root, "packages/core/.tmp/effect4"),
    retry: path.join(root, "packages/retry/.tmp/effect4")
  }
}

// One process: each case runs `n` calls inside one Effect, after a warm-up; prints ns per call.
const cases = `
import { Hedging, Retry, RetryBudget } from "@circuitry/retry"
import { Effect, Schedule } from "effect"

const n = 20_000
const time = (effect) => {
  const loop = Effect.gen(function* () { for (let i = 0; i < n; i++) yield* effect })
  Effect.runSync(loop)
  const start = process.hrtime.bigint()
  Effect.runSync(loop)
  return Number(process.hrtime.bigint() - start) / n
}
const schedule = Schedule.recurs(3)
const ok = Effect.succeed(1)
const out = Effect.runSync(Effect.scoped(Effect.gen(function* () {
  const budget = yield* RetryBudget.make({ name: "bench" })
  const hedging = yield* Hedging.make({ name: "bench", delay: "1 second" })
  return {
    "Effect.retry (baseline)": time(Effect.retry(ok, schedule)),
    "Retry.retry, budget, first attempt succeeds": time(Retry.retry(ok, { schedule, budget })),
    "withHedging, fast success": time(Hedging.withHedging(ok, hedging))
  }
})))
console.log(JSON.stringify(out))
`

const harness = (edition) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `circuitry-bench-effect${edition}-`))
  const modules = path.join(dir, "node_modules")
  fs.mkdirSync(path.join(modules, "@circuitry"), { recursive: true })
  const e = editions[edition]
  fs.symlinkSync(e.effect, path.join(modules, "effect"))
  fs.symlinkSync(e.retry, path.join(modules, "@circuitry/retry"))
  fs.writeFileSync(path.join(dir, "bench.mjs"), cases)
  return dir
}

/** node_modules in the Effect 4 builds, removed after the run. */
const links = []
const link = (from, name, to) => {
  const modules = path.join(from, "node_modules")
  fs.mkdirSync(path.dirname(path.join(modules, name)), { recursive: true })
  fs.symlinkSync(to, path.join(modules, name))
  links.push(modules)
}
link(editions[4].core, "effect", editions[4].effect)
link(editions[4].retry, "effect", editions[4].effect)
link(editions[4].retry, "@circuitry/core", editions[4].core)

const samples = { 3: [], 4: [] }
const dirs = {}
try {
  dirs[3] = harness(3)
  dirs[4] = harness(4)
  for (let r = 0; r < rounds; r++) {
    for (const edition of r % 2 === 0 ? [3, 4] : [4, 3]) {
      const stdout = execFileSync(process.execPath, ["bench.mjs"], {
        cwd: dirs[edition],
        encoding: "utf8"
      })
      samples[edition].push(JSON.parse(stdout.trim().split("\n").pop()))
    }
  }
} finally {
  for (const dir of [...Object.values(dirs), ...links]) fs.rmSync(dir, { recursive: true, force: true })
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
const names = Object.keys(samples[3][0])
console.log(`| case (median of ${rounds} rounds, ns per call) | effect 3.22 | effect 4.1 | 4 / 3 |`)
console.log("| --- | ---: | ---: | ---: |")
for (const name of names) {
  const a = median(samples[3].map((s) => s[name]))
  const b = median(samples[4].map((s) => s[name]))
  console.log(`| ${name} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(2)} |`)
}
