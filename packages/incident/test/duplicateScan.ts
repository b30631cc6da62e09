/**
 * The scanner behind duplicates.test.ts: the same logic written in two packages. Each source is
 * normalised (comments, blank lines, imports and lines of bare punctuation dropped, whitespace
 * folded), and every run of at least `minLines` consecutive normalised lines that stands in two
 * different packages is a copy. It compares text to the letter after that, so a run that only has
 * the same shape with other names (the same parts declared in each package) is not one.
 */

/** A source file: its package folder name, its path (for the report) and its text. */
export interface Source {
  readonly pkg: string
  readonly file: string
  readonly text: string
}

/** One normalised line and the 1-based line it came from. */
export interface Line {
  readonly text: string
  readonly line: number
}

/** A run found in two packages: where it starts and ends in each, and its normalised lines. */
export interface Copy {
  readonly a: { readonly file: string; readonly from: number; readonly to: number }
  readonly b: { readonly file: string; readonly from: number; readonly to: number }
  readonly lines: ReadonlyArray<string>
}

/**
 * The text with its comments blanked (newlines kept, so line numbers stay), strings and template
 * literals left alone: a `//` inside `"redis://..."` is not a comment.
 */
export const stripComments = (text: string): string => {
  let out = ""
  let i = 0
  while (i < text.length) {
    const c = text[i]!
    const next = text[i + 1]
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") i++
    } else if (c === "/" && next === "*") {
      i += 2
      while (i < text.length && !(text[i] === "*" && text[i + 1] === "/")) {
        if (text[i] === "\n") out += "\n"
        i++
      }
      i += 2
    } else if (c === '"' || c === "'" || c === "`") {
      out += c
      i++
      while (i < text.length && text[i] !== c) {
        if (text[i] === "\\") out += text[i++]!
        if (i < text.length) out += text[i++]!
      }
      if (i < text.length) out += text[i++]!
    } else {
      out += c
      i++
    }
  }
  return out
}

const punctuationOnly = /^[\s{}()[\];,]*$/

/** The lines that carry logic, each trimmed with its whitespace folded. */
export const normalise = (text: string): Array<Line> => {
  const lines = stripComments(text).split("\n")
  const out: Array<Line> = []
  let inImport = false
  lines.forEach((raw, index) => {
    const text = raw.trim().replace(/\s+/g, " ")
    if (inImport) {
      if (/\bfrom\s+["']/.test(text) || /^["'].*["']$/.test(text)) inImport = false
      return
    }
    if (/^import\b/.test(text) || /^export (\*|\{[^}]*\}|type \{[^}]*\}) from\b/.test(text)) {
      // A multi-line `import {` ends at its `from "..."` line.
      if (!/\bfrom\s+["']/.test(text) && !/^import\s+["']/.test(text)) inImport = true
      return
    }
    if (punctuationOnly.test(text)) return
    out.push({ text, line: index + 1 })
  })
  return out
}

/** Whether two files are alternatives for the two Effect majors (never in one build). */
const otherMajors = (a: string, b: string): boolean =>
  (a.endsWith(".effect3.ts") && b.endsWith(".effect4.ts")) || (a.endsWith(".effect4.ts") && b.endsWith(".effect3.ts"))

/** Every run of `minLines` or more normalised lines that two files of different packages share. */
export const findCopies = (sources: ReadonlyArray<Source>, minLines = 6): Array<Copy> => {
  const normalised = sources.map((source) => ({ source, lines: normalise(source.text) }))
  // Every window of minLines lines, by its text: where it stands.
  const windows = new Map<string, Array<{ readonly file: number; readonly at: number }>>()
  normalised.forEach(({ lines }, file) => {
    for (let at = 0; at + minLines <= lines.length; at++) {
      const key = lines
        .slice(at, at + minLines)
        .map((l) => l.text)
        .join("\n")
      const list = windows.get(key)
      if (list === undefined) windows.set(key, [{ file, at }])
      else list.push({ file, at })
    }
  })
  // A pair of windows (file a at i, file b at j) continues a run when (i - 1, j - 1) matched too.
  const matched = new Set<string>()
  const starts: Array<{ readonly a: number; readonly i: number; readonly b: number; readonly j: number }> = []
  for (const places of windows.values()) {
    if (places.length < 2) continue
    for (const p of places) {
      for (const q of places) {
        if (p.file >= q.file) continue
        const a = normalised[p.file]!.source
        const b = normalised[q.file]!.source
        if (a.pkg === b.pkg || otherMajors(a.file, b.file)) continue
        matched.add(`${p.file}:${p.at}:${q.file}:${q.at}`)
        starts.push({ a: p.file, i: p.at, b: q.file, j: q.at })
      }
    }
  }
  const copies: Array<Copy> = []
  for (const { a, b, i, j } of starts) {
    if (matched.has(`${a}:${i - 1}:${b}:${j - 1}`)) continue // inside a run found from its start
    let length = minLines
    while (matched.has(`${a}:${i + length - minLines + 1}:${b}:${j + length - minLines + 1}`)) length++
    const la = normalised[a]!.lines
    const lb = normalised[b]!.lines
    copies.push({
      a: { file: normalised[a]!.source.file, from: la[i]!.line, to: la[i + length - 1]!.line },
      b: { file: normalised[b]!.source.file, from: lb[j]!.line, to: lb[j + length - 1]!.line },
      lines: la.slice(i, i + length).map((l) => l.text)
    })
  }
  return copies.sort((x, y) => x.a.file.localeCompare(y.a.file) || x.a.from - y.a.from)
}

/** One line a copy: `a.ts:10-24 ~ b.ts:40-54 (15 lines)`. */
export const describeCopy = (copy: Copy): string =>
  `${copy.a.file}:${copy.a.from}-${copy.a.to} ~ ${copy.b.file}:${copy.b.from}-${copy.b.to} (${copy.lines.length} lines, from "${copy.lines[0]}")`
