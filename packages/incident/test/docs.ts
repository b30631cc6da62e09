/** Finding the markdown files and the code blocks in them (shared by the docs tests). */
import * as fs from "node:fs"
import * as path from "node:path"

export interface Block {
  /** The markdown file, relative to the root. */
  readonly file: string
  /** The 0-based line of the opening fence. */
  readonly line: number
  readonly code: string
  /** Fenced as ```ts no-check. */
  readonly skip: boolean
  /** The Effect major the block is written for: 4 when fenced as ```ts effect4, else 3. */
  readonly edition: 3 | 4
}

/** docs/**\/*.md, packages/*\/README.md and README.md, relative to the root, sorted. */
export const markdownFiles = (root: string): Array<string> => {
  const found: Array<string> = []
  const walk = (dir: string) => {
    if (!fs.existsSync(dir)) return
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (entry.name.endsWith(".md")) found.push(path.relative(root, full))
    }
  }
  walk(path.join(root, "docs"))
  for (const pkg of fs.readdirSync(path.join(root, "packages"))) {
    const readme = path.join(root, "packages", pkg, "README.md")
    if (fs.existsSync(readme)) found.push(path.relative(root, readme))
  }
  if (fs.existsSync(path.join(root, "README.md"))) found.push("README.md")
  return found.map((file) => file.split(path.sep).join("/")).sort()
}

/** The ```ts (or ```typescript) blocks of one markdown file. */
export const extract = (root: string, file: string): Array<Block> => {
  const lines = fs.readFileSync(path.join(root, file), "utf8").split("\n")
  const blocks: Array<Block> = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*(ts|typescript)\b(.*)$/.exec(lines[i]!)
    if (open === null) continue
    const [, indent, fence, , info] = open
    const body: Array<string> = []
    let j = i + 1
    for (; j < lines.length; j++) {
      const line = lines[j]!
      if (line.trim().startsWith(fence!) && line.trim().replace(/[`~]/g, "") === "") break
      body.push(line.startsWith(indent!) ? line.slice(indent!.length) : line)
    }
    blocks.push({
      file,
      line: i,
      code: body.join("\n"),
      skip: /\bno-check\b/.test(info!),
      edition: /\beffect4\b/.test(info!) ? 4 : 3
    })
    i = j
  }
  return blocks
}
