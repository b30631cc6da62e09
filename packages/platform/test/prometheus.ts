/**
 * A strict parser of the Prometheus text exposition format 0.0.4, for tests: it throws, saying
 * which line and why, on what a Prometheus scraper rejects (a bad name, label or value, a TYPE
 * after its samples or given twice, a family split in two, a series given twice, histogram
 * buckets that are not cumulative or lack `le="+Inf"` equal to `_count`).
 */
export interface Exposition {
  readonly families: Map<string, { type: string; help: string | undefined }>
  /** Every sample, by `seriesKey(name, labels)`. */
  readonly samples: Map<string, number>
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const FLOAT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/
const TYPES = new Set(["counter", "gauge", "histogram", "summary", "untyped"])

export const seriesKey = (name: string, labels: Readonly<Record<string, string>>): string =>
  `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`

const parseValue = (text: string, where: string): number => {
  if (text === "NaN") return NaN
  if (/^[+-]?Inf$/.test(text)) return text.startsWith("-") ? -Infinity : Infinity
  if (!FLOAT.test(text)) throw new Error(`${where}: value ${JSON.stringify(text)} is not a float`)
  return Number(text)
}

/** `a="x",b="y\"z"` (the part inside the braces) into a record. */
const parseLabels = (text: string, where: string): Record<string, string> => {
  const labels: Record<string, string> = {}
  let i = 0
  while (i < text.length) {
    const eq = text.indexOf("=", i)
    if (eq < 0 || text[eq + 1] !== '"') throw new Error(`${where}: malformed labels ${JSON.stringify(text)}`)
    const name = text.slice(i, eq)
    if (!LABEL.test(name) || name.startsWith("__")) throw new Error(`${where}: bad label name ${JSON.stringify(name)}`)
    if (name in labels) throw new Error(`${where}: label ${name} given twice`)
    let value = ""
    let j = eq + 2
    for (;;) {
      if (j >= text.length) throw new Error(`${where}: malformed labels (unterminated value) ${JSON.stringify(text)}`)
      const c = text[j]!
      if (c === '"') break
      if (c === "\n") throw new Error(`${where}: malformed labels (raw newline)`)
      if (c === "\\") {
        const next = text[j + 1]
        if (next === "\\") value += "\\"
        else if (next === '"') value += '"'
        else if (next === "n") value += "\n"
        else throw new Error(`${where}: malformed labels (escape \\${next})`)
        j += 2
      } else {
        value += c
        j++
      }
    }
    labels[name] = value
    i = j + 1
    if (i < text.length) {
      if (text[i] !== ",") throw new Error(`${where}: malformed labels ${JSON.stringify(text)}`)
      i++
    }
  }
  return labels
}

/** Splits `name{labels} value [timestamp]`, minding quoted braces and spaces in label values. */
const splitSample = (line: string, where: string) => {
  const brace = line.indexOf("{")
  const space = line.indexOf(" ")
  if (brace >= 0 && (space < 0 || brace < space)) {
    let j = brace + 1
    let quoted = false
    for (; j < line.length; j++) {
      const c = line[j]
      if (quoted && c === "\\") j++
      else if (c === '"') quoted = !quoted
      else if (!quoted && c === "}") break
    }
    if (j >= line.length) throw new Error(`${where}: malformed labels (no closing brace)`)
    return { name: line.slice(0, brace), labels: line.slice(brace + 1, j), rest: line.slice(j + 1) }
  }
  return { name: line.slice(0, space < 0 ? line.length : space), labels: "", rest: space < 0 ? "" : line.slice(space) }
}

export const parse = (text: string): Exposition => {
  const families = new Map<string, { type: string; help: string | undefined }>()
  const samples = new Map<string, number>()
  const typed = new Set<string>() // families that had their TYPE line
  const sampled = new Set<string>() // families whose samples have started
  const closed = new Set<string>() // families whose samples have ended
  let current: string | undefined
  /** histogram series (name + labels without le) -> its buckets in order and its count */
  const histograms = new Map<string, { buckets: Array<[number, number]>; count?: number; where: string }>()

  const familyOf = (name: string): string => {
    for (const suffix of ["_bucket", "_sum", "_count"]) {
      if (!name.endsWith(suffix)) continue
      const base = name.slice(0, -suffix.length)
      const type = families.get(base)?.type
      if (type === "histogram" || (type === "summary" && suffix !== "_bucket")) return base
    }
    return name
  }

  text.split("\n").forEach((line, index) => {
    const where = `line ${index + 1}`
    if (line === "") return
    if (line.startsWith("#")) {
      const m = /^#\s+(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(line)
      if (m === null) return // a comment
      const [, kind, name, rest = ""] = m
      if (!NAME.test(name!)) throw new Error(`${where}: bad metric name ${JSON.stringify(name)}`)
      const family = families.get(name!) ?? { type: "untyped", help: undefined }
      if (kind === "TYPE") {
        if (typed.has(name!)) throw new Error(`${where}: TYPE of ${name} given twice`)
        if (sampled.has(name!)) throw new Error(`${where}: TYPE of ${name} after its samples`)
        if (!TYPES.has(rest)) throw new Error(`${where}: TYPE ${JSON.stringify(rest)} is not a type`)
        typed.add(name!)
        families.set(name!, { ...family, type: rest })
      } else {
        if (family.help !== undefined) throw new Error(`${where}: HELP of ${name} given twice`)
        families.set(name!, { ...family, help: rest.replace(/\\n/g, "\n").replace(/\\\\/g, "\\") })
      }
      return
    }
    const { labels: labelText, name, rest } = splitSample(line, where)
    if (!NAME.test(name)) throw new Error(`${where}: bad metric name ${JSON.stringify(name)}`)
    const labels = parseLabels(labelText, where)
    const parts = rest.trim().split(/\s+/)
    if (parts.length < 1 || parts.length > 2 || parts[0] === "") {
      throw new Error(`${where}: expected a value (and a timestamp)`)
    }
    const v = parseValue(parts[0]!, where)
    const family = familyOf(name)
    if (family !== current) {
      if (current !== undefined) closed.add(current)
      if (closed.has(family)) throw new Error(`${where}: the samples of ${family} are not together`)
      current = family
    }
    sampled.add(family)
    const key = seriesKey(name, labels)
    if (samples.has(key)) throw new Error(`${where}: series ${key} given twice`)
    samples.set(key, v)
    if (families.get(family)?.type === "histogram") {
      const { le, ...others } = labels
      const h = histograms.get(seriesKey(family, others)) ?? { buckets: [], where }
      histograms.set(seriesKey(family, others), h)
      if (name.endsWith("_bucket")) {
        if (le === undefined) throw new Error(`${where}: a bucket without le`)
        h.buckets.push([parseValue(le, where), v])
      } else if (name.endsWith("_count")) h.count = v
    }
  })

  for (const [series, h] of histograms) {
    for (let i = 1; i < h.buckets.length; i++) {
      const [le0, c0] = h.buckets[i - 1]!
      const [le1, c1] = h.buckets[i]!
      if (!(le1 > le0) || c1 < c0) throw new Error(`${h.where}: buckets of ${series} are not cumulative`)
    }
    const last = h.buckets[h.buckets.length - 1]
    if (last === undefined || last[0] !== Infinity) throw new Error(`${h.where}: ${series} has no le="+Inf" bucket`)
    if (h.count !== last[1]) throw new Error(`${h.where}: ${series}: the +Inf bucket is not _count`)
  }
  return { families, samples }
}

/** A sample's value, or `undefined` when the page has no such series. */
export const value = (
  exposition: Exposition,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number | undefined => exposition.samples.get(seriesKey(name, labels))
