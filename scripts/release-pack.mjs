// `pnpm release:pack <dir>`: builds every public package (each packages/*/package.json without
// "private": true) and packs it with pnpm, which writes real ranges where the workspace says
// `workspace:^`, into one folder per edition: `<dir>/effect3/*.tgz`, every public package for
// Effect 3, and `<dir>/effect4/*.tgz`, the packages ported so far (editions/effect4/ported.ts)
// built for Effect 4 by scripts/build-package.mjs, whose edition folder holds the manifest of that
// edition. The Effect 3 manifests are packed through pack-hooks.cjs (no repository scripts,
// devDependencies or source condition), and each package ships its CHANGELOG.md.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildEdition, editionDir } from "./build-package.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const hooks = path.join(root, "scripts", "pack-hooks.cjs")

const [target, ...extra] = process.argv.slice(2)
if (target === undefined || extra.length > 0) {
  console.error("usage: pnpm release:pack <dir>   (writes <dir>/effect3/*.tgz and <dir>/effect4/*.tgz)")
  process.exit(2)
}
// pnpm runs a script in the workspace root; a relative <dir> means where the command was typed.
const out = path.resolve(process.env.INIT_CWD ?? process.cwd(), target)

/** pnpm itself when it runs this script, else the version the workspace names; `quiet`: no stdout. */
const pnpm = (args, cwd, quiet = false) => {
  const execPath = process.env.npm_execpath
  const [command, prefix] =
    execPath !== undefined && /pnpm/.test(execPath) && /\.[cm]?js$/.test(execPath)
      ? [process.execPath, [execPath]]
      : ["npx", ["-y", JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).packageManager]]
  execFileSync(command, [...prefix, ...args], { cwd, stdio: ["ignore", quiet ? "ignore" : "inherit", "inherit"] })
}

const publicPackages = () =>
  fs
    .readdirSync(path.join(root, "packages"))
    .sort()
    .map((folder) => path.join(root, "packages", folder))
    .filter((dir) => {
      const file = path.join(dir, "package.json")
      return fs.existsSync(file) && JSON.parse(fs.readFileSync(file, "utf8")).private !== true
    })

/** The packages editions/effect4/ported.ts lists, in its order (dependencies first). */
const ported = () => {
  const list = /\[([^\]]*)\]/.exec(fs.readFileSync(path.join(root, "editions", "effect4", "ported.ts"), "utf8"))
  return [...(list?.[1] ?? "").matchAll(/"([^"]+)"/g)].map((m) => path.join(root, "packages", m[1]))
}

const editions = [
  {
    name: "effect3",
    packages: publicPackages,
    // The root `build`: every public package into its dist/, dependencies first.
    build: () => pnpm(["run", "build"], root),
    pack: (dir, dest) => pnpm([`--config.pnpmfile=${hooks}`, "pack", "--pack-destination", dest], dir, true)
  },
  {
    name: "effect4",
    packages: ported,
    build: () => {
      for (const dir of ported()) buildEdition(dir, 4)
    },
    // The edition's folder holds its own manifest (real sibling ranges, no scripts or devDependencies).
    pack: (dir, dest) =>
      execFileSync("npm", ["pack", "--silent", "--pack-destination", dest], {
        cwd: editionDir(dir, 4),
        stdio: ["ignore", "ignore", "inherit"]
      })
  }
]

for (const edition of editions) {
  const dest = path.join(out, edition.name)
  fs.mkdirSync(dest, { recursive: true })
  // Tarballs of an earlier run would be installed beside the new ones.
  for (const file of fs.readdirSync(dest)) if (file.endsWith(".tgz")) fs.rmSync(path.join(dest, file))
  edition.build()
  // Quiet: the packers list every file of every tarball.
  for (const dir of edition.packages()) edition.pack(dir, dest)
  const packed = fs.readdirSync(dest).filter((file) => file.endsWith(".tgz"))
  console.log(`${edition.name}: ${packed.length} tarballs in ${dest}\n${packed.map((f) => `  ${f}`).join("\n")}`)
}
