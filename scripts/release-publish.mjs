// The release's publish plan for the tarballs `pnpm release:pack <dir>` wrote (docs/editions.md,
// "Publishing both editions"):
//
//   node scripts/release-publish.mjs <dir>             prints the commands, runs nothing
//   node scripts/release-publish.mjs <dir> --dry-run   runs each `npm publish --dry-run`
//   node scripts/release-publish.mjs <dir> --publish   publishes (the release, logged in to npm)
//
// Every Effect 4 tarball is published under `latest` (what `npm install <name>` gives), every
// Effect 3 one under `effect3` (`npm install <name>@effect3`), never under `latest`: npm would
// otherwise move `latest` to it. A package with no Effect 4 edition yet (not in
// editions/effect4/ported.ts) also gets `latest` on its Effect 3 version, so that `npm install
// <name>` gives its newest release rather than whichever version was published first; on an app on
// Effect 4 that install then fails with npm's peer error, as it should. In each edition a package
// is published after the siblings it peers on.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { distTags } from "./release-versions.mjs"

const [target, mode = "--print", ...extra] = process.argv.slice(2)
if (target === undefined || !["--print", "--dry-run", "--publish"].includes(mode) || extra.length > 0) {
  console.error("usage: node scripts/release-publish.mjs <dir> [--dry-run | --publish]")
  process.exit(2)
}

const manifestOf = (tarball) =>
  JSON.parse(execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }))

/** The tarballs of one edition, each after the @circuitry siblings it peers on. */
const edition = (major) => {
  const dir = path.join(target, `effect${major}`)
  const found = fs.existsSync(dir) ? fs.readdirSync(dir).filter((file) => file.endsWith(".tgz")) : []
  const tarballs = found
    .sort()
    .map((file) => ({ tarball: path.join(dir, file), manifest: manifestOf(path.join(dir, file)) }))
  for (const { tarball, manifest } of tarballs) {
    // A tarball of the other edition here would be published under this edition's tag.
    if (!manifest.version.startsWith(`${major}.`)) {
      throw new Error(`${tarball}: version ${manifest.version} is not an Effect ${major} edition's (${major}.x.y)`)
    }
  }
  const ordered = []
  const visit = (entry) => {
    if (ordered.includes(entry)) return
    for (const peer of Object.keys(entry.manifest.peerDependencies ?? {})) {
      const sibling = tarballs.find((other) => other.manifest.name === peer)
      if (sibling !== undefined) visit(sibling)
    }
    ordered.push(entry)
  }
  tarballs.forEach(visit)
  return ordered
}

const effect4 = edition(4)
const effect3 = edition(3)
if (effect3.length === 0 && effect4.length === 0) {
  console.error(`no tarballs in ${path.join(target, "effect3")} or ${path.join(target, "effect4")}`)
  process.exit(1)
}
const steps = [
  ...effect4.map(({ tarball }) => ["publish", path.resolve(tarball), "--tag", distTags[4]]),
  ...effect3.map(({ tarball }) => ["publish", path.resolve(tarball), "--tag", distTags[3]]),
  ...effect3
    .filter(({ manifest }) => !effect4.some((other) => other.manifest.name === manifest.name))
    .map(({ manifest }) => ["dist-tag", "add", `${manifest.name}@${manifest.version}`, distTags[4]])
]
for (const args of steps) {
  console.log(`npm ${args.join(" ")}`)
  if (mode === "--publish") execFileSync("npm", args, { stdio: "inherit" })
  // `npm dist-tag` has no dry run: it is only printed.
  else if (mode === "--dry-run" && args[0] === "publish")
    execFileSync("npm", [...args, "--dry-run"], { stdio: "inherit" })
}
