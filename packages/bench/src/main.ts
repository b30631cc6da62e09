/**
 * `pnpm bench`: every scenario group in a child process of its own, one after another, then one
 * table for all of them, printed and written to docs/benchmarks.md.
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { extras, renderOutput } from "./extras.js"
import { calibrate, calibrationText, limits, limitsText } from "./limits.js"
import type { GroupResult } from "./protocol.js"
import { parse } from "./protocol.js"
import type { Other, Run } from "./report.js"
import { markdown, memoryTable, TITLES, timedTable, verdictTable } from "./report.js"
import * as limiter from "./groups/limiter.js"
import { verdicts } from "./targets.js"
import { verdicts as retryVerdicts } from "./groups/retry.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const pkg = path.resolve(here, "..")
const root = path.resolve(pkg, "../..")
const loader = path.join(pkg, "loader", "register.mjs")
const child = path.join(here, "child.ts")

interface Spawned {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly timedOut: boolean
}

const runNode = (args: ReadonlyArray<string>, cwd: string, timeoutMs: number): Promise<Spawned> =>
  new Promise((resolve) => {
    const proc = spawn(process.execPath, ["--expose-gc", ...args], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    let timedOut = false
    proc.stdout.on("data", (d) => (stdout += d))
    proc.stderr.on("data", (d) => (stderr += d))
    const timer = setTimeout(() => {
      timedOut = true
      proc.kill("SIGKILL")
    }, timeoutMs)
    proc.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr, timedOut })
    })
  })

const tail = (text: string, lines = 8): string => text.trim().split("\n").slice(-lines).join("\n")

interface Group {
  readonly title: string
  readonly args: ReadonlyArray<string>
  /** Load the sources through tsx instead of the TypeScript loader. */
  readonly tsx?: boolean
  /** Which time limit is its (`kinds`). */
  readonly kind: Kind
}

/**
 * The time limits on a quiet machine, each many times what its groups take there; `pnpm bench`
 * scales them to the machine it finds (limits.ts).
 */
const kinds = {
  timed: { what: "each timed group", quietMillis: 150_000 },
  memory: { what: "each memory group", quietMillis: 120_000 },
  extra: { what: "each other package's script", quietMillis: 120_000 }
} as const
type Kind = keyof typeof kinds

const timedGroups: ReadonlyArray<Group> = [
  "in-fiber",
  "per-call",
  "rejection",
  "registry",
  "burst",
  "retry",
  "hedging",
  "limiter",
  "limiter-rejection"
].map((g) => ({
  title: TITLES[g] ?? g,
  args: [g],
  kind: "timed" as const
}))

const memoryGroups: ReadonlyArray<Group> = [
  ...[
    "circuitry-consecutive",
    "circuitry-rate",
    "circuitry-consecutive-used",
    "circuitry-rate-used",
    "circuitry-churn",
    "cockatiel-consecutive",
    "cockatiel-sampling",
    "opossum"
  ].map((subject) => ({ title: `memory: ${subject}`, args: ["memory", subject], kind: "memory" as const })),
  { title: "memory: limiter-gradient2", args: ["limiter-memory"], kind: "memory" },
  {
    title: "memory: circuitry-consecutive under tsx",
    args: ["memory", "circuitry-consecutive", "1"],
    tsx: true,
    kind: "memory"
  }
]

const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100)

const versionOf = (name: string): string => {
  try {
    if (name.startsWith("@circuitry/")) {
      const file = path.join(root, "packages", name.slice("@circuitry/".length), "package.json")
      return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version
    }
    const require = createRequire(path.join(pkg, "package.json"))
    const file = require.resolve(`${name}/package.json`)
    return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version
  } catch {
    return "not found"
  }
}

const commitOf = (): string => {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim()
    const status = execFileSync("git", ["status", "--porcelain", "--", "packages"], { cwd: root, encoding: "utf8" })
    // Which packages differ from the commit (another package's work in progress does not change these figures).
    const dirty = new Set(
      status
        .split("\n")
        .map((line) => /packages\/[^/]+/.exec(line.slice(3))?.[0])
        .filter((p): p is string => p !== undefined)
    )
    return dirty.size === 0 ? sha : `${sha}, with uncommitted changes in ${[...dirty].sort().join(", ")}`
  } catch {
    return "unknown"
  }
}

const main = async () => {
  const started = performance.now()
  const loadBefore = loadAverage()
  const results: Array<GroupResult> = []
  const others: Array<Other> = []
  // Before any group, so that the limits are known before one is needed.
  const calibration = await calibrate()
  const sized = limits(kinds, calibration)
  process.stdout.write(
    `calibration: ${calibrationText(calibration)}\ntime limits: ${limitsText(Object.values(sized))}\n`
  )

  for (const group of [...timedGroups, ...memoryGroups]) {
    const t0 = performance.now()
    process.stdout.write(`${group.title} ... `)
    const limit = sized[group.kind].millis
    const out = await runNode(["--import", group.tsx ? "tsx" : loader, child, ...group.args], pkg, limit)
    const result = parse(out.stdout)
    if (result === undefined || out.code !== 0) {
      const why = out.timedOut ? `timed out after ${Math.round(limit / 1000)} s` : `exit code ${out.code}`
      process.stdout.write(`FAILED (${why})\n${tail(out.stderr)}\n`)
      others.push({ title: group.title, status: "failed", text: `${why}: ${tail(out.stderr, 3)}` })
      continue
    }
    if (group.tsx && result._tag === "Memory") {
      results.push({
        ...result,
        rows: result.rows.map((r) => ({ ...r, id: `${r.id}-tsx`, label: `${r.label}, loaded through tsx (keepNames)` }))
      })
    } else {
      results.push(result)
    }
    process.stdout.write(`${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
  }

  for (const extra of extras) {
    const file = path.join(root, extra.dir, extra.file)
    if (!existsSync(file)) {
      process.stdout.write(`${extra.title}: skipped, ${extra.dir}/${extra.file} does not exist yet\n`)
      others.push({ title: extra.title, status: "skipped", text: `${extra.dir}/${extra.file} does not exist yet.` })
      continue
    }
    const t0 = performance.now()
    process.stdout.write(`${extra.title} ... `)
    const limit = sized.extra.millis
    const out = await runNode(["--import", loader, file, "--json"], path.join(root, extra.dir), limit)
    if (out.code !== 0) {
      const why = out.timedOut ? `timed out after ${Math.round(limit / 1000)} s` : `exit code ${out.code}`
      process.stdout.write(`FAILED (${why})\n${tail(out.stderr)}\n`)
      others.push({ title: extra.title, status: "failed", text: `${why}: ${tail(out.stderr, 3)}` })
      continue
    }
    process.stdout.write(`${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
    const rendered = renderOutput(extra, out.stdout)
    const command = `${extra.dir}/${extra.file} --json, in its own process`
    others.push(
      rendered === undefined
        ? { title: extra.title, status: "ran", text: `${command}; its output:\n\n\`\`\`\n${out.stdout.trim()}\n\`\`\`` }
        : { title: extra.title, status: "ran", text: `${command}. ${rendered}` }
    )
    process.stdout.write(`${rendered ?? out.stdout.trim()}\n`)
  }

  const cpus = os.cpus()
  const run: Run = {
    machine: {
      date: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
      cpu: cpus[0]?.model.trim() ?? "unknown",
      cores: cpus.length,
      memoryGiB: os.totalmem() / 2 ** 30,
      os: `${os.type()} ${os.release()} ${os.arch()}`,
      node: process.version,
      loadBefore,
      loadAfter: loadAverage(),
      commit: commitOf(),
      versions: {
        "@circuitry/breaker": versionOf("@circuitry/breaker"),
        "@circuitry/retry": versionOf("@circuitry/retry"),
        effect: versionOf("effect"),
        cockatiel: versionOf("cockatiel"),
        opossum: versionOf("opossum"),
        typescript: versionOf("typescript")
      },
      seconds: (performance.now() - started) / 1000,
      calibration,
      limits: Object.values(sized)
    },
    results,
    verdicts: [...verdicts(results), ...retryVerdicts(results), ...limiter.verdicts(results)],
    others
  }

  process.stdout.write("\n")
  for (const result of results) {
    if (result._tag === "Timed") process.stdout.write(`${TITLES[result.group]}\n${timedTable(result)}\n\n`)
  }
  const memory = results.flatMap((r) => (r._tag === "Memory" ? r.rows : []))
  if (memory.length > 0) process.stdout.write(`Memory per breaker\n${memoryTable(memory)}\n\n`)
  process.stdout.write(`Targets\n${verdictTable(run.verdicts)}\n\n`)
  const doc = path.join(root, "docs", "benchmarks.md")
  writeFileSync(doc, markdown(run, "pnpm bench"))
  process.stdout.write(`Written to ${path.relative(process.cwd(), doc)} (${Math.round(run.machine.seconds)} s)\n`)
}

await main()
