// `pnpm release:pack <dir>`: builds every public package (each packages/*/package.json without
// "private": true) and packs it with npm into one folder per edition: `<dir>/effect3/*.tgz`, every
// public package for Effect 3, and `<dir>/effect4/*.tgz`, the packages ported so far
// (editions/effect4/ported.ts) built for Effect 4. Each tarball is packed from a folder of its
// edition (<package>/.tmp/effect3, .tmp/effect4) whose package.json scripts/build-package.mjs
// writes: the edition's version (3.M.P, 4.M.P: release-versions.mjs), the peer `effect` range of its
// major, its siblings at the same edition's version, no repository scripts, devDependencies or
// source condition. Each ships its CHANGELOG.md with the edition's versions in the headings.
// `node scripts/release-publish.mjs <dir>` then says how each tarball is published.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildEdition, editionDir, editionManifest } from "./build-package.mjs"
import { editionChangelog } from "./release-versions.mjs"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")

const [target, ...extra] = process.argv.slice(2)
if (target === undefined || extra.length > 0) {
  console.error("usage: pnpm release:pack <dir>   (writes <dir>/effect3/*.tgz and <dir>/effect4/*.tgz)")
  process.exit(2)
}
// pnpm runs a script in the workspace root; a relative <dir> means where the command was typed.
const out = path.resolve(process.env.INIT_CWD ?? process.cwd(), target)

/** pnpm itself when it runs this script, else the version the workspace names. */
const pnpm = (args, cwd) => {
  const execPath = process.env.npm_execpath
  const [command, prefix] =
    execPath !== undefined && /pnpm/.test(execPath) && /\.[cm]?js$/.test(execPath)
      ? [process.execPath, [execPath]]
      : ["npx", ["-y", JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")).packageManager]]
  execFileSync(command, [...prefix, ...args], { cwd, stdio: ["ignore", "inherit", "inherit"] })
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

/**
 * The folder the Effect 3 edition of the package in `dir` is packed from: the root build's dist/,
 * the sources less the Effect 4 files, README, LICENSE, and the edition's package.json.
 */
const effect3Folder = (dir) => {
  const folder = path.join(dir, ".tmp", "effect3")
  fs.rmSync(folder, { recursive: true, force: true })
  fs.mkdirSync(folder, { recursive: true })
  fs.cpSync(path.join(dir, "dist"), path.join(folder, "dist"), { recursive: true })
  fs.cpSync(path.join(dir, "src"), path.join(folder, "src"), {
    recursive: true,
    filter: (file) => !file.endsWith(".effect4.ts")
  })
  for (const file of ["README.md", "LICENSE", "CHANGELOG.md"]) {
    if (fs.existsSync(path.join(dir, file))) fs.copyFileSync(path.join(dir, file), path.join(folder, file))
  }
  fs.writeFileSync(path.join(folder, "package.json"), JSON.stringify(editionManifest(dir, 3), null, 2) + "\n")
  return folder
}

const editions = [
  {
    name: "effect3",
    major: 3,
    packages: publicPackages,
    // The root `build`: every public package into its dist/, dependencies first.
    build: () => pnpm(["run", "build"], root),
    folder: effect3Folder
  },
  {
    name: "effect4",
    major: 4,
    packages: ported,
    build: () => {
      for (const dir of ported()) buildEdition(dir, 4)
    },
    // buildEdition wrote the whole folder, its package.json included.
    folder: (dir) => editionDir(dir, 4)
  }
]

for (const edition of editions) {
  const dest = path.join(out, edition.name)
  fs.mkdirSync(dest, { recursive: true })
  // Tarballs of an earlier run would be installed beside the new ones.
  for (const file of fs.readdirSync(dest)) if (file.endsWith(".tgz")) fs.rmSync(path.join(dest, file))
  edition.build()
  for (const dir of edition.packages()) {
    const folder = edition.folder(dir)
    const changelog = path.join(folder, "CHANGELOG.md")
    fs.writeFileSync(
      changelog,
      editionChangelog(fs.readFileSync(path.join(dir, "CHANGELOG.md"), "utf8"), edition.major)
    )
    // Quiet: npm lists every file of every tarball.
    execFileSync("npm", ["pack", "--silent", "--pack-destination", dest], {
      cwd: folder,
      stdio: ["ignore", "ignore", "inherit"]
    })
  }
  const packed = fs.readdirSync(dest).filter((file) => file.endsWith(".tgz"))
  console.log(`${edition.name}: ${packed.length} tarballs in ${dest}\n${packed.map((f) => `  ${f}`).join("\n")}`)
}
