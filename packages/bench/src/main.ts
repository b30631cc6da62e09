/**
 * `pnpm bench`: every scenario group in a child process of its own per Effect major (editions.ts),
 * one after another, then the tables, printed and written to docs/benchmarks.md.
 */
import { execFileSync, spawn } from "node:child_process"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { extras, renderOutput } from "./extras.js"
import { calibrate, calibrationText, limits, limitsText } from "./limits.js"
import { type Major, majors } from "./editions.js"
import type { GroupResult } from "./protocol.js"
import { parse } from "./protocol.js"
import type { EditionRun, Other, Run } from "./report.js"
import { editionName, markdown, memoryTable, TITLES, timedTable, verdictTable } from "./report.js"
import * as limiter from "./groups/limiter.js"
import { verdicts } from "./targets.js"
import { verdicts as retryVerdicts } from "./groups/retry.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const pkg = path.resolve(here, "..")
const root = path.resolve(pkg, "../..")
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
  /** The package it measures (its folder under packages/): whether it runs on Effect 4 (editions.ts). */
  readonly pkg: string
  /** Measured on Effect 3 only: it uses no Effect (the peers' memory) or is about the loader (tsx). */
  readonly once?: boolean
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

const timedGroups: ReadonlyArray<Group> = (
  [
    ["in-fiber", "breaker"],
    ["per-call", "breaker"],
    ["rejection", "breaker"],
    ["registry", "breaker"],
    ["burst", "breaker"],
    ["retry", "retry"],
    ["hedging", "retry"],
    ["limiter", "limiter"],
    ["limiter-rejection", "limiter"]
  ] as const
).map(([g, pkg]) => ({
  title: TITLES[g] ?? g,
  args: [g],
  pkg,
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
  ].map((subject) => ({
    title: `memory: ${subject}`,
    args: ["memory", subject],
    pkg: "breaker",
    once: !subject.startsWith("circuitry"),
    kind: "memory" as const
  })),
  { title: "memory: limiter-gradient2", args: ["limiter-memory"], pkg: "limiter", kind: "memory" },
  {
    title: "memory: circuitry-consecutive under tsx",
    args: ["memory", "circuitry-consecutive", "1"],
    pkg: "breaker",
    once: true,
    tsx: true,
    kind: "memory"
  }
]

const loadAverage = () => os.loadavg().map((l) => Math.round(l * 100) / 100)

const versionOf = (name: string, from: string = path.join(pkg, "package.json")): string => {
  try {
    if (name.startsWith("@circuitry/")) {
      const file = path.join(root, "packages", name.slice("@circuitry/".length), "package.json")
      return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version
    }
    const require = createRequire(from)
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

/** Where a major's results go while the run lasts. */
interface Collected {
  readonly major: Major
  readonly results: Array<GroupResult>
  readonly others: Array<Other>
}

const failure = (out: Spawned, limit: number): string =>
  out.timedOut ? `timed out after ${Math.round(limit / 1000)} s` : `exit code ${out.code}`

/** Runs one group on one major; what it measured goes to `into`. */
const runGroup = async (group: Group, into: Collected, limit: number): Promise<void> => {
  const t0 = performance.now()
  const title = `${group.title}, Effect ${into.major.major}`
  process.stdout.write(`${title} ... `)
  const flags = group.tsx ? ["--import", "tsx"] : into.major.flags
  const out = await runNode([...flags, child, ...group.args], pkg, limit)
  const result = parse(out.stdout)
  if (result === undefined || out.code !== 0 || (result.major !== undefined && result.major !== into.major.major)) {
    const why =
      result !== undefined && out.code === 0
        ? `loaded Effect ${result.major}, not ${into.major.major}`
        : failure(out, limit)
    process.stdout.write(`FAILED (${why})\n${tail(out.stderr)}\n`)
    into.others.push({ title: group.title, status: "failed", text: `${why}: ${tail(out.stderr, 3)}` })
    return
  }
  if (group.tsx && result._tag === "Memory") {
    into.results.push({
      ...result,
      rows: result.rows.map((r) => ({ ...r, id: `${r.id}-tsx`, label: `${r.label}, loaded through tsx (keepNames)` }))
    })
  } else {
    into.results.push(result)
  }
  process.stdout.write(`${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
}

/** Runs another package's bench script on one major. */
const runExtra = async (extra: (typeof extras)[number], into: Collected, limit: number): Promise<void> => {
  const file = path.join(root, extra.dir, extra.file)
  if (!existsSync(file)) {
    process.stdout.write(`${extra.title}: skipped, ${extra.dir}/${extra.file} does not exist yet\n`)
    into.others.push({ title: extra.title, status: "skipped", text: `${extra.dir}/${extra.file} does not exist yet.` })
    return
  }
  const t0 = performance.now()
  process.stdout.write(`${extra.title}, Effect ${into.major.major} ... `)
  const out = await runNode([...into.major.flags, file, "--json"], path.join(root, extra.dir), limit)
  if (out.code !== 0) {
    const why = failure(out, limit)
    process.stdout.write(`FAILED (${why})\n${tail(out.stderr)}\n`)
    into.others.push({ title: extra.title, status: "failed", text: `${why}: ${tail(out.stderr, 3)}` })
    return
  }
  process.stdout.write(`${((performance.now() - t0) / 1000).toFixed(1)} s\n`)
  const rendered = renderOutput(extra, out.stdout)
  const command = `${extra.dir}/${extra.file} --json, in its own process`
  into.others.push(
    rendered === undefined
      ? { title: extra.title, status: "ran", text: `${command}; its output:\n\n\`\`\`\n${out.stdout.trim()}\n\`\`\`` }
      : { title: extra.title, status: "ran", text: `${command}. ${rendered}` }
  )
  process.stdout.write(`${rendered ?? out.stdout.trim()}\n`)
}

const main = async () => {
  const started = performance.now()
  const loadBefore = loadAverage()
  const collected: ReadonlyArray<Collected> = majors.map((major) => ({ major, results: [], others: [] }))
  // Before any group, so that the limits are known before one is needed.
  const calibration = await calibrate()
  const sized = limits(kinds, calibration)
  process.stdout.write(
    `calibration: ${calibrationText(calibration)}\ntime limits: ${limitsText(Object.values(sized))}\n`
  )

  // A group's majors back to back, so that both meet about the same load.
  for (const group of [...timedGroups, ...memoryGroups]) {
    for (const into of collected) {
      if (!into.major.runs(group.pkg) || (group.once && into.major.major !== 3)) continue
      await runGroup(group, into, sized[group.kind].millis)
    }
  }
  for (const extra of extras) {
    for (const into of collected) {
      if (into.major.runs(path.basename(extra.dir))) await runExtra(extra, into, sized.extra.millis)
    }
  }

  const editions: ReadonlyArray<EditionRun> = collected.map(({ major, others, results }) => ({
    major: major.major,
    effect: versionOf("effect", major.anchor),
    results,
    verdicts: [...verdicts(results), ...retryVerdicts(results), ...limiter.verdicts(results)],
    others
  }))
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
        ...Object.fromEntries(editions.map((e) => [`effect (Effect ${e.major})`, e.effect])),
        cockatiel: versionOf("cockatiel"),
        opossum: versionOf("opossum"),
        typescript: versionOf("typescript")
      },
      seconds: (performance.now() - started) / 1000,
      calibration,
      limits: Object.values(sized)
    },
    editions
  }

  process.stdout.write("\n")
  for (const e of editions) {
    for (const result of e.results) {
      if (result._tag === "Timed")
        process.stdout.write(`${TITLES[result.group]}, ${editionName(e)}\n${timedTable(result)}\n\n`)
    }
    const memory = e.results.flatMap((r) => (r._tag === "Memory" ? r.rows : []))
    if (memory.length > 0) process.stdout.write(`Memory per breaker, ${editionName(e)}\n${memoryTable(memory)}\n\n`)
  }
  process.stdout.write(`Targets\n${verdictTable(editions)}\n\n`)
  const doc = path.join(root, "docs", "benchmarks.md")
  writeFileSync(doc, markdown(run, "pnpm bench"))
  process.stdout.write(`Written to ${path.relative(process.cwd(), doc)} (${Math.round(run.machine.seconds)} s)\n`)
}

await main()
