// `pnpm release:pack <dir>`: builds every public package (each packages/*/package.json without
// "private": true) and packs it with pnpm, which writes real ranges where the workspace says
// `workspace:^`, into one folder per edition: today `<dir>/effect3/*.tgz`, the Effect 3 edition
// built from this source. An Effect 4 edition is one more entry in `editions`, writing
// `<dir>/effect4/` beside it. The manifests are packed through pack-hooks.cjs (no repository
// scripts, devDependencies or source condition), and each package ships its CHANGELOG.md.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const hooks = path.join(root, "scripts", "pack-hooks.cjs")

const [target, ...extra] = process.argv.slice(2)
if (target === undefined || extra.length > 0) {
  console.error("usage: pnpm release:pack <dir>   (writes <dir>/effect3/*.tgz)")
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

const editions = [
  {
    name: "effect3",
    packages: publicPackages,
    // The root `build`: every public package into its dist/, dependencies first.
    build: () => pnpm(["run", "build"], root)
  }
]

for (const edition of editions) {
  const dest = path.join(out, edition.name)
  fs.mkdirSync(dest, { recursive: true })
  // Tarballs of an earlier run would be installed beside the new ones.
  for (const file of fs.readdirSync(dest)) if (file.endsWith(".tgz")) fs.rmSync(path.join(dest, file))
  edition.build()
  for (const dir of edition.packages()) {
    // Quiet: pnpm lists every file of every tarball.
    pnpm([`--config.pnpmfile=${hooks}`, "pack", "--pack-destination", dest], dir, true)
  }
  const packed = fs.readdirSync(dest).filter((file) => file.endsWith(".tgz"))
  console.log(`${edition.name}: ${packed.length} tarballs in ${dest}\n${packed.map((f) => `  ${f}`).join("\n")}`)
}
