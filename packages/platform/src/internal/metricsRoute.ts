/**
 * Effect's metric registry in the Prometheus text exposition format, version 0.0.4
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). One family per metric name:
 * `# HELP` (when the metric has a description), `# TYPE`, then its series sorted by labels.
 */
import { HttpServerResponse, router as routerOf, type Router } from "#http"
import { read, snapshot, type Input } from "#metrics"
import * as Effect from "effect/Effect"

/** @internal */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

type Type = "counter" | "gauge" | "histogram" | "summary"

/**
 * One series of the registry, as the major's pair (#metrics) reads it from a `MetricPair` (Effect 3)
 * or a `Metric.Snapshot` (Effect 4): what the rendering needs and nothing of either major.
 *
 * @internal
 */
export interface Reading {
  readonly name: string
  readonly description: string | undefined
  readonly tags: ReadonlyArray<readonly [string, string]>
  readonly state:
    | { readonly _tag: "Counter"; readonly incremental: boolean; readonly count: number | bigint }
    | { readonly _tag: "Gauge"; readonly value: number | bigint }
    | {
        readonly _tag: "Histogram"
        readonly buckets: ReadonlyArray<readonly [number, number]>
        readonly count: number
        readonly sum: number
      }
    | {
        readonly _tag: "Summary"
        readonly quantiles: ReadonlyArray<readonly [number, number | undefined]>
        readonly count: number
        readonly sum: number
      }
    | { readonly _tag: "Frequency"; readonly occurrences: Iterable<readonly [string, number]> }
}

/** One sample line: the name's suffix (`_bucket`, `_sum`, ...), extra labels, the value. */
interface Sample {
  readonly suffix: string
  readonly extra: ReadonlyArray<readonly [string, string]>
  readonly value: number | bigint
}

interface Family {
  readonly type: Type
  readonly help: string | undefined
  /** The Effect metric type that made the family: series of another type under the same name are left out. */
  readonly keyType: string
  readonly series: Array<Series>
  /** Label sets already in `series` (two names may sanitise to one). */
  readonly seen: Set<string>
  /** Effect types left out because the name already had another one. */
  readonly conflicts: Set<string>
}

interface Series {
  /** The series' own labels, sorted by name, and as written (the key its lines sort by). */
  readonly labels: ReadonlyArray<readonly [string, string]>
  readonly sortKey: string
  readonly samples: ReadonlyArray<Sample>
}

/** Metric names: `[a-zA-Z_:][a-zA-Z0-9_:]*`; anything else becomes `_`. */
const metricName = (name: string): string => {
  const s = name.replace(/[^a-zA-Z0-9_:]/g, "_")
  return s === "" || /^[0-9]/.test(s) ? `_${s}` : s
}

/** Label names: `[a-zA-Z_][a-zA-Z0-9_]*`, and `__` is reserved for Prometheus itself. */
const labelName = (name: string): string => {
  const s = name.replace(/[^a-zA-Z0-9_]/g, "_")
  const valid = s === "" || /^[0-9]/.test(s) ? `_${s}` : s
  return valid.startsWith("__") ? `x${valid}` : valid
}

const escapeLabelValue = (value: string): string =>
  value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"')

const escapeHelp = (text: string): string => text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")

/** Go's ParseFloat spellings for what JavaScript writes as `Infinity`. */
const formatValue = (value: number | bigint): string =>
  typeof value === "bigint"
    ? value.toString()
    : value === Infinity
      ? "+Inf"
      : value === -Infinity
        ? "-Inf"
        : Number.isNaN(value)
          ? "NaN"
          : String(value)

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const formatLabels = (labels: ReadonlyArray<readonly [string, string]>): string =>
  labels.length === 0 ? "" : `{${labels.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(",")}}`

/** The family's type and its samples, from one series' state. */
const samplesOf = (state: Reading["state"]): { readonly type: Type; readonly samples: ReadonlyArray<Sample> } => {
  switch (state._tag) {
    case "Counter":
      // An Effect counter may go down unless it is `incremental`; a Prometheus counter may not
      // (OpenTelemetry exports the first as an up-down counter, which Prometheus reads as a gauge).
      return {
        type: state.incremental ? "counter" : "gauge",
        samples: [{ suffix: "", extra: [], value: state.count }]
      }
    case "Gauge":
      return { type: "gauge", samples: [{ suffix: "", extra: [], value: state.value }] }
    case "Histogram": {
      // Effect's buckets are cumulative, the last one usually +Infinity; Prometheus requires `le="+Inf"`.
      const samples: Array<Sample> = state.buckets.map(([le, count]) => ({
        suffix: "_bucket",
        extra: [["le", formatValue(le)]],
        value: count
      }))
      const last = state.buckets[state.buckets.length - 1]
      if (last === undefined || last[0] !== Infinity) {
        samples.push({ suffix: "_bucket", extra: [["le", "+Inf"]], value: state.count })
      }
      samples.push({ suffix: "_sum", extra: [], value: state.sum }, { suffix: "_count", extra: [], value: state.count })
      return { type: "histogram", samples }
    }
    case "Summary": {
      const samples: Array<Sample> = state.quantiles.map(([q, value]) => ({
        suffix: "",
        extra: [["quantile", formatValue(q)]],
        value: value ?? NaN
      }))
      samples.push({ suffix: "_sum", extra: [], value: state.sum }, { suffix: "_count", extra: [], value: state.count })
      return { type: "summary", samples }
    }
    case "Frequency": {
      // One series per value seen, labelled `key` (as @effect/opentelemetry exports a frequency).
      const samples = [...state.occurrences]
        .sort(([a], [b]) => compare(a, b))
        .map(([key, count]): Sample => ({ suffix: "", extra: [["key", key]], value: count }))
      return { type: "counter", samples }
    }
  }
}

/** The kind of metric that made a series: a name keeps the first kind it was seen with. */
const kindOf = (state: Reading["state"]): string =>
  state._tag === "Counter" ? (state.incremental ? "incremental counter" : "counter") : state._tag.toLowerCase()

/** @internal */
export const render = (inputs: Iterable<Input>): string => {
  const families = new Map<string, Family>()
  for (const input of inputs) {
    const reading = read(input)
    if (reading === undefined) continue
    const made = samplesOf(reading.state)
    const name = metricName(reading.name)
    const keyType = kindOf(reading.state)
    let family = families.get(name)
    if (family === undefined) {
      const help = reading.description
      family = { type: made.type, help, keyType, series: [], seen: new Set(), conflicts: new Set() }
      families.set(name, family)
    } else if (family.keyType !== keyType) {
      // One name, two kinds of metric: a scraper rejects a family that mixes types.
      family.conflicts.add(keyType)
      continue
    }
    // A tag given twice keeps its last value (a label may appear once); ours (`le`, `quantile`, `key`) win.
    const tags = new Map<string, string>()
    for (const [key, value] of reading.tags) tags.set(labelName(key), value)
    for (const [k] of made.samples[0]?.extra ?? []) tags.delete(k)
    const labels = [...tags].sort(([a], [b]) => compare(a, b))
    const sortKey = formatLabels(labels)
    // A scraper rejects a page that has one series twice.
    if (family.seen.has(sortKey)) continue
    family.seen.add(sortKey)
    family.series.push({ labels, sortKey, samples: made.samples })
  }
  const lines: Array<string> = []
  for (const name of [...families.keys()].sort()) {
    const family = families.get(name)!
    if (family.help !== undefined) lines.push(`# HELP ${name} ${escapeHelp(family.help)}`)
    lines.push(`# TYPE ${name} ${family.type}`)
    // A comment (which scrapers ignore) says what is left out, rather than dropping it unseen.
    for (const other of family.conflicts) lines.push(`# ${name}: series of another metric type (${other}) left out`)
    for (const series of family.series.sort((a, b) => compare(a.sortKey, b.sortKey))) {
      for (const sample of series.samples) {
        const labels = formatLabels([...series.labels, ...sample.extra])
        lines.push(`${name}${sample.suffix}${labels} ${formatValue(sample.value)}`)
      }
    }
  }
  return lines.length === 0 ? "" : lines.join("\n") + "\n"
}

/** @internal */
export const text: Effect.Effect<string> = Effect.map(snapshot, render)

/** @internal */
export const app: Effect.Effect<HttpServerResponse.HttpServerResponse> = Effect.map(text, (body) =>
  HttpServerResponse.text(body, { contentType: CONTENT_TYPE, headers: { "cache-control": "no-store" } })
)

/** @internal */
export const router = (options?: { readonly path?: `/${string}` | undefined }): Router<never> =>
  routerOf([{ method: "GET", path: options?.path ?? "/metrics", handler: app }])
