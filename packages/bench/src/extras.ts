/**
 * Benchmarks that other packages keep (their files, their figures): run with `--json` in their
 * own process, rendered here as tables. Output that cannot be read is shown as it came.
 */

export interface Extra {
  readonly title: string
  /** The package folder, from the repository root. */
  readonly dir: string
  /** The script, from the package folder. */
  readonly file: string
  readonly render: (json: unknown) => string | undefined
}

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [
    `| ${head.join(" | ")} |`,
    `| ${head.map((_, i) => (i === 0 ? "---" : "---:")).join(" | ")} |`,
    ...rows.map((r) => `| ${r.join(" | ")} |`)
  ].join("\n")

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const num = (u: unknown, digits = 0): string =>
  typeof u === "number" && Number.isFinite(u) ? u.toLocaleString("en", { maximumFractionDigits: digits }) : "?"

/** packages/cache/bench/guard.ts --json: `{ figures: [{ name, nsPerGet, overheadNs, ratio }] }` */
export const renderCache = (json: unknown): string | undefined => {
  if (!isRecord(json) || !Array.isArray(json["figures"])) return undefined
  const head = `Median of ${num(json["repeats"])} samples of ${num(json["batch"])} gets of one cached key, in one Effect.`
  return `${head}\n\n${table(
    ["case", "ns/get", "over the bare get", "x bare"],
    json["figures"]
      .filter(isRecord)
      .map((f) => [
        String(f["name"]),
        num(f["nsPerGet"]),
        `${typeof f["overheadNs"] === "number" && f["overheadNs"] >= 0 ? "+" : ""}${num(f["overheadNs"])} ns`,
        `${num(f["ratio"], 2)}x`
      ])
  )}`
}

/** packages/redis/bench/throughput.ts --json: `{ results: [{ op, mode, rawOpsPerSec, storeOpsPerSec, ratio }] }` */
export const renderRedis = (json: unknown): string | undefined => {
  if (!isRecord(json) || !Array.isArray(json["results"])) return undefined
  const head = `Median ops/s over ${num(json["rounds"])} rounds of ${num(json["ops"])} operations, ${num(json["valueBytes"])}-byte values, Redis at ${String(json["url"])}. Goal (issue 13): with calls in flight concurrently, RedisStore keeps at least 80% of raw ioredis's throughput.`
  return `${head}\n\n${table(
    ["op", "mode", "raw ioredis, ops/s", "RedisStore, ops/s", "store / raw", ">= 80%"],
    json["results"]
      .filter(isRecord)
      .map((r) => [
        String(r["op"]),
        String(r["mode"]),
        num(r["rawOpsPerSec"]),
        num(r["storeOpsPerSec"]),
        typeof r["ratio"] === "number" ? `${Math.round(r["ratio"] * 100)}%` : "?",
        typeof r["ratio"] !== "number" || !String(r["mode"]).startsWith("concurrent")
          ? ""
          : r["ratio"] >= 0.8
            ? "PASS"
            : "**FAIL**"
      ])
  )}`
}

/** packages/redis/bench/breaker.ts --json: `{ results: [{ label, memoryMicros, redisMicros, ratio, rawMicros? }] }` */
export const renderRedisBreaker = (json: unknown): string | undefined => {
  if (!isRecord(json) || !Array.isArray(json["results"])) return undefined
  const head = `CPU microseconds per call of this process, median of ${num(json["rounds"])} rounds of ${num(json["calls"])} calls, the event loop turning between calls; Redis at ${String(json["url"])}. Goal (issue 13): at most 2x the in-memory breaker. The raw column sends the same Redis traffic with raw ioredis (for the cycle: three commands, two publications heard back): what that I/O costs by itself.`
  return `${head}\n\n${table(
    [
      "path",
      "in memory, us/call",
      "Redis store, us/call",
      "x memory",
      "<= 2x",
      "raw ioredis, same traffic, us/call",
      "x raw"
    ],
    json["results"]
      .filter(isRecord)
      .map((r) => [
        String(r["label"]),
        num(r["memoryMicros"], 1),
        num(r["redisMicros"], 1),
        `${num(r["ratio"], 2)}x`,
        typeof r["ratio"] === "number" ? (r["ratio"] <= 2 ? "PASS" : "**FAIL**") : "?",
        typeof r["rawMicros"] === "number" ? num(r["rawMicros"], 1) : "",
        typeof r["rawMicros"] === "number" && typeof r["redisMicros"] === "number"
          ? `${num(r["redisMicros"] / r["rawMicros"], 2)}x`
          : ""
      ])
  )}`
}

export const extras: ReadonlyArray<Extra> = [
  {
    title: "@circuitry/cache: guarded cache overhead per get",
    dir: "packages/cache",
    file: "bench/guard.ts",
    render: renderCache
  },
  {
    title: "@circuitry/redis: RedisStore against raw ioredis",
    dir: "packages/redis",
    file: "bench/throughput.ts",
    render: renderRedis
  },
  {
    title: "@circuitry/redis: a shared breaker with the Redis store against the same breaker in memory",
    dir: "packages/redis",
    file: "bench/breaker.ts",
    render: renderRedisBreaker
  }
]

/** The last line of `stdout` that parses as JSON, rendered; undefined when there is none. */
export const renderOutput = (extra: Extra, stdout: string): string | undefined => {
  const lines = stdout.trim().split("\n").reverse()
  for (const line of lines) {
    if (!line.startsWith("{")) continue
    try {
      return extra.render(JSON.parse(line))
    } catch {
      // not JSON: keep looking
    }
  }
  return undefined
}
