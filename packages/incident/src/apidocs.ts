/**
 * The API reference, generated from the sources: for each public package, docs/api/<name>.md with
 * every export of its public modules (packages/<name>/src/*.ts, not internal/), its signature and
 * its JSDoc. Run it with `pnpm --filter @circuitry/incident apidocs`; a test checks that the
 * committed files are what it would write.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as prettier from "prettier"
import ts from "typescript"

/**
 * The repository's root.
 *
 * @since 0.1.0
 * @category paths
 */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..")

interface PackageInfo {
  readonly folder: string
  readonly name: string
  readonly description: string
  readonly modules: ReadonlyArray<string>
}

/** The public packages (not `private`), each with its public modules, sorted. */
const packages = (): Array<PackageInfo> => {
  const dir = path.join(root, "packages")
  const found: Array<PackageInfo> = []
  for (const folder of fs.readdirSync(dir).sort()) {
    const manifest = path.join(dir, folder, "package.json")
    const src = path.join(dir, folder, "src")
    if (!fs.existsSync(manifest) || !fs.existsSync(src)) continue
    const json = JSON.parse(fs.readFileSync(manifest, "utf8")) as {
      name?: string
      private?: boolean
      description?: string
    }
    if (json.private === true || json.name === undefined) continue
    const modules = fs
      .readdirSync(src)
      .filter((file) => file.endsWith(".ts") && file !== "index.ts" && !file.endsWith(".d.ts"))
      .sort()
      .map((file) => path.join(src, file))
    if (modules.length > 0) found.push({ folder, name: json.name, description: json.description ?? "", modules })
  }
  return found
}

const compilerOptions = (): ts.CompilerOptions => {
  const file = path.join(root, "tsconfig.base.json")
  const read = ts.readConfigFile(file, (p) => ts.sys.readFile(p))
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, root)
  return { ...parsed.options, noEmit: true }
}

const text = (parts: ReadonlyArray<ts.SymbolDisplayPart> | undefined): string =>
  (parts ?? []).map((p) => p.text).join("")

/** The signature of a declaration: its source text without bodies or initialisers. */
const signature = (decl: ts.Declaration, name: string, checker: ts.TypeChecker, source: ts.SourceFile): string => {
  const squash = (s: string) => s.replace(/\r/g, "")
  if (ts.isInterfaceDeclaration(decl) || ts.isTypeAliasDeclaration(decl)) {
    return squash(withoutComments(decl.getText(source)))
  }
  if (ts.isClassDeclaration(decl)) {
    const heritage = decl.heritageClauses?.map((h) => h.getText(source)).join(" ") ?? ""
    const header = `export declare class ${name}${decl.typeParameters ? `<${decl.typeParameters.map((t) => t.getText(source)).join(", ")}>` : ""} ${heritage}`
    return squash(withoutComments(header.trim()) + " {}")
  }
  if (ts.isFunctionDeclaration(decl)) {
    const params = decl.parameters.map((p) => p.getText(source)).join(", ")
    const types = decl.typeParameters ? `<${decl.typeParameters.map((t) => t.getText(source)).join(", ")}>` : ""
    const returns = decl.type ? `: ${decl.type.getText(source)}` : ""
    return squash(withoutComments(`export declare function ${name}${types}(${params})${returns}`))
  }
  if (ts.isVariableDeclaration(decl)) {
    const type =
      decl.type !== undefined
        ? decl.type.getText(source)
        : checker.typeToString(
            checker.getTypeAtLocation(decl.name),
            decl,
            ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType
          )
    return squash(withoutComments(`export declare const ${name}: ${withoutAbsolutePaths(type)}`))
  }
  if (ts.isModuleDeclaration(decl)) return `export declare namespace ${name}`
  if (ts.isEnumDeclaration(decl)) return squash(decl.getText(source))
  return squash(withoutComments(decl.getText(source)))
}

/**
 * An inferred type names other modules by absolute path (`import("/home/…/node_modules/.pnpm/
 * effect@3.22.4/node_modules/effect/dist/dts/Metric")`): write the package's module instead, so that
 * the reference reads well and is the same on every machine.
 */
export const withoutAbsolutePaths = (type: string): string =>
  type.replace(
    /import\("[^"]*\/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)\/dist\/dts\/([^"]+)"\)/g,
    'import("$1/$2")'
  )

/** Drops JSDoc and line comments from a signature (the JSDoc is printed beside it). */
const withoutComments = (s: string): string =>
  s
    .replace(/\/\*\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "")
    .replace(/\n\s*\n/g, "\n")

interface Entry {
  readonly name: string
  readonly category: string
  readonly since: string | undefined
  readonly doc: string
  readonly examples: ReadonlyArray<string>
  readonly signature: string
}

const entriesOf = (file: string, program: ts.Program, checker: ts.TypeChecker): { doc: string; entries: Entry[] } => {
  const source = program.getSourceFile(file)
  if (source === undefined) return { doc: "", entries: [] }
  const moduleSymbol = checker.getSymbolAtLocation(source)
  // The module's own JSDoc: the first comment of the file.
  const first = ts.getLeadingCommentRanges(source.getFullText(), 0)?.[0]
  const moduleDoc =
    first === undefined ? "" : cleanComment(source.getFullText().slice(first.pos, first.end)).description
  if (moduleSymbol === undefined) return { doc: moduleDoc, entries: [] }
  const entries: Array<Entry> = []
  const seen = new Set<string>()
  for (const symbol of checker.getExportsOfModule(moduleSymbol)) {
    const name = symbol.getName()
    if (seen.has(name)) continue
    const resolved = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol
    const decls = (resolved.getDeclarations() ?? []).filter((d) => d.getSourceFile() === source)
    const decl = decls[0] ?? resolved.getDeclarations()?.[0]
    if (decl === undefined) continue
    const tags = resolved.getJsDocTags(checker)
    if (tags.some((t) => t.name === "internal")) continue
    seen.add(name)
    const tag = (n: string) => text(tags.find((t) => t.name === n)?.text).trim()
    // A value and a type of the same name (`Cache` the tag and `Cache` the type) are shown together.
    const signatures = decls.length > 0 ? decls : [decl]
    entries.push({
      name,
      category: tag("category") || "exports",
      since: tag("since") || undefined,
      doc: text(resolved.getDocumentationComment(checker)).trim(),
      examples: tags.filter((t) => t.name === "example").map((t) => text(t.text).trim()),
      signature: signatures.map((d) => signature(d, name, checker, d.getSourceFile())).join("\n")
    })
  }
  return { doc: moduleDoc, entries }
}

const cleanComment = (comment: string): { description: string } => {
  const body = comment
    .replace(/^\/\*\*?/, "")
    .replace(/\*\/$/, "")
    .split("\n")
    .map((line) => line.replace(/^\s*\* ?/, ""))
  const description = body
    .filter((line) => !line.trim().startsWith("@"))
    .join("\n")
    .trim()
  return { description }
}

/** A fenced example as written in the JSDoc, or wrapped in a ts fence when it has none. */
const example = (source: string): string => (source.startsWith("```") ? source : "```ts\n" + source + "\n```")

const render = (pkg: PackageInfo, program: ts.Program, checker: ts.TypeChecker): string => {
  const out: Array<string> = []
  out.push(`# ${pkg.name}`, "")
  out.push(
    `<!-- Generated from packages/${pkg.folder}/src by packages/incident/src/apidocs.ts: do not edit; run \`pnpm --filter @circuitry/incident apidocs\`. -->`,
    ""
  )
  if (pkg.description !== "") out.push(pkg.description, "")
  out.push(
    `\`\`\`ts no-check`,
    `import { ${pkg.modules.map((m) => path.basename(m, ".ts")).join(", ")} } from "${pkg.name}"`,
    "```",
    ""
  )
  out.push("Modules:", "")
  for (const file of pkg.modules) {
    const name = path.basename(file, ".ts")
    out.push(`- [${name}](#${name.toLowerCase()})`)
  }
  out.push("")
  for (const file of pkg.modules) {
    const moduleName = path.basename(file, ".ts")
    const { doc, entries } = entriesOf(file, program, checker)
    out.push(`## ${moduleName}`, "")
    if (doc !== "") out.push(doc, "")
    const categories = [...new Set(entries.map((e) => e.category))].sort()
    for (const category of categories) {
      out.push(`### ${category}`, "")
      for (const entry of entries.filter((e) => e.category === category).sort((a, b) => a.name.localeCompare(b.name))) {
        out.push(`#### ${moduleName}.${entry.name}`, "")
        if (entry.doc !== "") out.push(entry.doc, "")
        out.push("```ts no-check", entry.signature, "```", "")
        for (const ex of entry.examples) out.push("Example:", "", example(ex), "")
        if (entry.since !== undefined) out.push(`Since ${entry.since}`, "")
      }
    }
  }
  return (
    out
      .join("\n")
      .replace(/\n{3,}/g, "\n\n")
      .trimEnd() + "\n"
  )
}

/**
 * Every file of the API reference, by path relative to the root: docs/api/<package>.md and
 * docs/api/README.md.
 *
 * @since 0.1.0
 * @category generating
 */
export const generate = async (): Promise<Map<string, string>> => {
  const found = packages()
  const program = ts.createProgram(
    found.flatMap((p) => p.modules),
    compilerOptions()
  )
  const checker = program.getTypeChecker()
  const files = new Map<string, string>()
  const index = [
    "# API reference",
    "",
    "<!-- Generated by packages/incident/src/apidocs.ts: do not edit; run `pnpm --filter @circuitry/incident apidocs`. -->",
    "",
    "Every export of every public module, with its signature and its documentation, generated from the sources.",
    ""
  ]
  for (const pkg of found) {
    files.set(`docs/api/${pkg.folder}.md`, render(pkg, program, checker))
    index.push(`- [\`${pkg.name}\`](${pkg.folder}.md): ${pkg.description}`)
  }
  files.set("docs/api/README.md", index.join("\n") + "\n")
  // Formatted as the repository's formatter would, so that format checks pass on them.
  for (const [file, content] of files) {
    const filepath = path.join(root, file)
    const options = (await prettier.resolveConfig(filepath)) ?? {}
    // Prettier is not always idempotent on embedded code: format until it is stable.
    let formatted = content
    for (let pass = 0; pass < 3; pass++) {
      const next = await prettier.format(formatted, { ...options, filepath })
      if (next === formatted) break
      formatted = next
    }
    files.set(file, formatted)
  }
  return files
}

/**
 * Writes the reference, and removes pages of packages that are gone.
 *
 * @since 0.1.0
 * @category generating
 */
export const write = async (): Promise<ReadonlyArray<string>> => {
  const files = await generate()
  const dir = path.join(root, "docs/api")
  fs.mkdirSync(dir, { recursive: true })
  for (const old of fs.readdirSync(dir)) {
    if (old.endsWith(".md") && !files.has(`docs/api/${old}`)) fs.rmSync(path.join(dir, old))
  }
  for (const [file, content] of files) fs.writeFileSync(path.join(root, file), content)
  return [...files.keys()]
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const file of await write()) console.log(`wrote ${file}`)
}
