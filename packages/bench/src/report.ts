/**
 * Renders one run as Markdown: the machine, the versions, the targets with PASS/FAIL on each
 * Effect major, and a table per scenario group and major.
 */
import { TITLES as RETRY_TITLES } from "./groups/retry.js"
import type { Measured } from "./harness.js"
import { type Calibration, calibrationText, type Limit, limitsText } from "./limits.js"
import type { GroupResult, MemoryRow, TimedGroup } from "./protocol.js"
import { pairedRatio } from "./stats.js"
import type { Verdict } from "./targets.js"

export interface Machine {
  readonly date: string
  readonly cpu: string
  readonly cores: number
  readonly memoryGiB: number
  readonly os: string
  readonly node: string
  readonly loadBefore: ReadonlyArray<number>
  readonly loadAfter: ReadonlyArray<number>
  readonly commit: string
  readonly versions: Record<string, string>
  readonly seconds: number
  /** The workload timed at the start, and the groups' time limits sized from it. */
  readonly calibration: Calibration
  readonly limits: ReadonlyArray<Limit>
}

/** A group that could not be run, or an extra script's own output. */
export interface Other {
  readonly title: string
  readonly status: "skipped" | "failed" | "ran"
  readonly text: string
}

/** What one Effect major measured: its groups, their verdicts, the other packages' scripts. */
export interface EditionRun {
  readonly major: number
  /** The version of effect its children loaded. */
  readonly effect: string
  readonly results: ReadonlyArray<GroupResult>
  readonly verdicts: ReadonlyArray<Verdict>
  readonly others: ReadonlyArray<Other>
}

export interface Run {
  readonly machine: Machine
  /** Effect 3 first. */
  readonly editions: ReadonlyArray<EditionRun>
}

/** "Effect 4 (effect 4.1.5)" */
export const editionName = (e: Pick<EditionRun, "major" | "effect">): string => `Effect ${e.major} (effect ${e.effect})`

export const TITLES: Record<string, string> = {
  "in-fiber": "Closed path, many calls inside one Effect.gen loop",
  "per-call": "Closed path, one Effect.runPromise per call",
  rejection: "Open-state rejection",
  registry: "Registry and breaker life cycle (get, make, first call, transitions)",
  burst: "Burst of 10,000 concurrent calls (closed)",
  ...RETRY_TITLES,
  limiter: "Limiter, admitted call, many calls inside one Effect.gen loop",
  "limiter-rejection": "Limiter, rejection (the limit is full)"
}

const fmtNs = (n: number): string => (n >= 10_000 ? Math.round(n).toLocaleString("en") : n.toFixed(n < 100 ? 1 : 0))

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`)
  ].join("\n")

/**
 * A group's table; with `first` (the same group on the first major), a column comparing each row's
 * median with that major's, which came from another process: for scale, not for a target.
 */
export const timedTable = (
  group: TimedGroup,
  first?: { readonly major: number; readonly group: TimedGroup }
): string => {
  const floor = group.rows.find((r) => r.id === group.floor)
  const row = (r: Measured) => {
    const before = first?.group.rows.find((b) => b.id === r.id)
    return [
      r.id === group.floor ? `**${r.label}**` : r.label,
      fmtNs(r.nsPerCall),
      `${Math.round(r.spread * 100)}%`,
      fmtNs(r.wallNsPerCall),
      floor === undefined ? "" : `${pairedRatio(r.samples, floor.samples).toFixed(2)}x`,
      ...(first === undefined ? [] : [before === undefined ? "" : `${(r.nsPerCall / before.nsPerCall).toFixed(2)}x`])
    ]
  }
  return table(
    [
      "row",
      "ns/call, CPU (median)",
      "noise (IQR/2)",
      "ns/call, wall (median)",
      "x floor",
      ...(first === undefined ? [] : [`x Effect ${first.major}`])
    ],
    group.rows.map(row)
  )
}

export const memoryTable = (rows: ReadonlyArray<MemoryRow>): string =>
  table(
    ["row", "bytes/breaker (median)", "samples", "make, us/breaker"],
    rows.map((r) => [
      r.label,
      Math.round(r.bytesPerBreaker).toLocaleString("en"),
      r.samples.map((s) => Math.round(s)).join(", "),
      ((r.createMillis * 1000) / r.breakers).toFixed(1)
    ])
  )

const verdictText = (v: Verdict | undefined): string =>
  v === undefined ? "NOT RUN" : v.pass === undefined ? "NOT MEASURED" : v.pass ? "PASS" : "**FAIL**"

/** Every target once, with its figure and verdict on each major ("not run" where its package was not). */
export const verdictTable = (editions: ReadonlyArray<Pick<EditionRun, "major" | "verdicts">>): string => {
  const targets = [...new Set(editions.flatMap((e) => e.verdicts.map((v) => v.target)))]
  return table(
    ["target", ...editions.flatMap((e) => [`Effect ${e.major}: measured`, `Effect ${e.major}`])],
    targets.map((target) => [
      target,
      ...editions.flatMap((e) => {
        const v = e.verdicts.find((x) => x.target === target)
        return [v?.measured ?? "not run", verdictText(v)]
      })
    ])
  )
}

export const markdown = (run: Run, command: string): string => {
  const m = run.machine
  const lines: Array<string> = []
  lines.push("# Benchmarks", "")
  lines.push(
    `Written by \`${command}\` (packages/bench) on ${m.date}, in ${Math.round(m.seconds)} s. Every figure below comes from that one run.`,
    ""
  )
  lines.push("## Machine", "")
  lines.push(
    table(
      ["", ""],
      [
        ["CPU", `${m.cpu}, ${m.cores} cores`],
        ["memory", `${m.memoryGiB.toFixed(0)} GiB`],
        ["OS", m.os],
        ["Node", m.node],
        ["load average (1, 5, 15 min) before", m.loadBefore.map((l) => l.toFixed(2)).join(", ")],
        ["load average after", m.loadAfter.map((l) => l.toFixed(2)).join(", ")],
        ["commit", m.commit],
        ["calibration", calibrationText(m.calibration)],
        ["time limits", limitsText(m.limits)],
        ...Object.entries(m.versions).map(([name, version]) => [name, version])
      ]
    ),
    ""
  )
  lines.push(
    "This machine is shared: other work may run during the benchmark (see the load average). Timed figures are CPU time of the benchmark's process (user + system) per call, so that time spent waiting for a core is not counted; wall-clock time is shown beside it, and is higher when the machine is busy. Each figure is the median of several repeats, and the repeats visit the rows round-robin, so that load falls on all rows alike; compare rows within a table rather than across runs. The `x floor` column is the median over the repeats of (the row's sample / the floor's sample of the same repeat), which cancels most of the drift between repeats; it can differ a little from the ratio of the two medians. The `noise` column is half the interquartile range of the repeats over the median.",
    ""
  )
  lines.push("## Targets", "")
  lines.push(
    "From the breaker issue: a closed `withBreaker` call at most 1.5x the cheapest Effect guard and at most 0.25x cockatiel bridged into Effect, an open rejection under 1 us, under 1 KB per breaker. From the retry issue: a first attempt through `Retry.retry` with a budget at most 1.2x `Effect.retry` with the same schedule. As issue 22 restates them: `withHedging` on a fast success (a loopback HTTP GET) at most 1.10x the same call run in a fiber of its own and at most 1.5x the bare call (the loopback TCP rows are for information); an admitted call through a limiter at most 1.10x the floor guard that reads the Clock at start and end (what timing one round trip costs: every call is timed, none sampled).",
    ""
  )
  lines.push(
    `Each target is measured on each Effect major (${run.editions.map(editionName).join(", ")}): the same benchmark source in child processes of its own per major, each ratio against a baseline measured in the same process and run. Effect 4 runs the groups of the packages ported to it (editions/effect4/ported.ts); "not run" marks a target whose package was not.`,
    ""
  )
  lines.push(verdictTable(run.editions), "")
  for (const e of run.editions) {
    const inFiber = e.results.find((r): r is TimedGroup => r._tag === "Timed" && r.group === "in-fiber")
    const floor = inFiber?.rows.find((r) => r.id === "floor")
    const bridge = inFiber?.rows.find((r) => r.id === "cockatiel-consecutive-bridged")
    if (floor !== undefined && bridge !== undefined) {
      lines.push(
        `For scale, on Effect ${e.major}: in this run the floor guard itself is ${pairedRatio(floor.samples, bridge.samples).toFixed(2)}x the bridged cockatiel call (${fmtNs(floor.nsPerCall)} ns against ${fmtNs(bridge.nsPerCall)} ns), so nothing that does a guard's work can be under ${pairedRatio(floor.samples, bridge.samples).toFixed(2)}x there.`,
        ""
      )
    }
  }
  const [first] = run.editions
  const groups = [
    ...new Set(run.editions.flatMap((e) => e.results.flatMap((r) => (r._tag === "Timed" ? [r.group] : []))))
  ]
  for (const name of groups) {
    lines.push(`## ${TITLES[name] ?? name}`, "")
    let notes: ReadonlyArray<string> = []
    for (const e of run.editions) {
      const result = e.results.find((r): r is TimedGroup => r._tag === "Timed" && r.group === name)
      if (result === undefined) continue
      const before =
        e === first ? undefined : first?.results.find((r): r is TimedGroup => r._tag === "Timed" && r.group === name)
      lines.push(`${editionName(e)}:`, "")
      lines.push(timedTable(result, before === undefined ? undefined : { major: first!.major, group: before }), "")
      notes = result.notes
    }
    for (const note of notes) lines.push(`- ${note}`)
    lines.push("")
  }
  if (run.editions.some((e) => e.results.some((r) => r._tag === "Memory"))) {
    lines.push("## Memory per breaker, 100,000 breakers", "")
    for (const e of run.editions) {
      const memory = e.results.flatMap((r) => (r._tag === "Memory" ? r.rows : []))
      if (memory.length > 0) lines.push(`${editionName(e)}:`, "", memoryTable(memory), "")
    }
    const notes = new Set(run.editions.flatMap((e) => e.results.flatMap((r) => (r._tag === "Memory" ? r.notes : []))))
    for (const note of notes) lines.push(`- ${note}`)
    lines.push("")
  }
  const titles = [...new Set(run.editions.flatMap((e) => e.others.map((o) => o.title)))]
  for (const title of titles) {
    lines.push(`## ${title}`, "")
    for (const e of run.editions) {
      const other = e.others.find((o) => o.title === title)
      if (other === undefined) continue
      lines.push(`${editionName(e)}:`, "")
      if (other.status !== "ran") lines.push(`${other.status === "skipped" ? "Skipped" : "Failed"}: ${other.text}`, "")
      else lines.push(other.text.trim(), "")
    }
  }
  lines.push("## How it is measured", "")
  lines.push(
    [
      "- One child process per scenario group and Effect major (the parent only spawns, collects and prints), the two majors of a group one after the other. The Effect 4 children run the same sources with the `@circuitry/effect4` condition (each package's Effect 4 edition files) and every `effect` import resolved from editions/effect4 (packages/bench/loader/register.effect4.mjs), as the Effect 4 tests run. Each child loads the TypeScript sources through `typescript.transpileModule` (packages/bench/loader), as a compiled package would run: tsx's esbuild `keepNames` gives every named closure a property table of its own and would add its own cost to the breaker's memory.",
      "- Each group warms every row up (two rounds) before the timed repeats, and forces no garbage collection between samples: a full `gc()` makes the next sample several times slower (the young generation and inline caches start cold), which would penalise whichever row runs right after it. The burst group measures wall time as well as CPU time; with 10,000 calls in flight its CPU figure is the one to compare.",
      "- The floor guard is the cheapest guard one can write with Effect combinators: `Effect.suspend` that checks a variable, then `Effect.catchAllCause(Effect.map(self, ...), ...)`. The naive breaker keeps its state in a `Ref` behind a `Semaphore` (lock, update, unlock per call) inside an `Effect.gen`. Rows and notes name Effect 3's combinators; on Effect 4 they are the same combinators under Effect 4's names (`catchCause`, `result`, `callback`, `Semaphore.make`), through the `Edition` facade.",
      "- Bridged rows are what an Effect user writes to use a Promise breaker: `Effect.tryPromise(() => policy.execute(() => Effect.runPromise(self)))` (opossum: `Effect.tryPromise(() => breaker.fire(self))` with the action `(self) => Effect.runPromise(self)`). Raw rows are the same breaker used natively, Promise to Promise.",
      "- cockatiel: `circuitBreaker(handleAll, { halfOpenAfter, breaker })` with `ConsecutiveBreaker(5)` or `SamplingBreaker({ threshold: 0.5, duration: 10 s })`. opossum: `new CircuitBreaker(fn, { timeout: false, resetTimeout, errorThresholdPercentage: 50 })`, its defaults otherwise (rolling stats, latency percentiles); the per-call timeout is off so that every row measures a breaker and not a timer.",
      "- Each child has a time limit, sized at the start of the run (the calibration and time limits rows above): a fixed CPU workload is timed, and each quiet machine's limit is scaled by how much slower it ran, never below that limit, so that a loaded machine does not kill a group that is only slow.",
      "- Memory: heap used after full collections, before and after making the breakers; names are made before the first reading. circuitry's breakers come from `BreakerRegistry.get(name)`, the peers' are kept in a `Map` by name."
    ].join("\n"),
    ""
  )
  return lines.join("\n")
}
