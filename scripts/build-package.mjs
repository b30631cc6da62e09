// Builds the package in the working directory into dist/, in the shape Effect's v3 packages ship:
// - dist/esm: ES modules, .d.ts and declaration maps (tsc, tsconfig.build.json);
// - dist/cjs: the same modules as CommonJS (tsc again, emitting JavaScript only), a package.json that
//   marks the folder CommonJS, and a copy of the .d.ts files, so that `require` gets types that
//   TypeScript reads as CommonJS (under node16 an ESM .d.ts cannot be required).
// `pnpm build` at the root runs this in every public package, dependencies first.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
const run = (args) => execFileSync(process.execPath, [tsc, ...args], { stdio: "inherit" })

fs.rmSync("dist", { recursive: true, force: true })
run(["-p", "tsconfig.build.json"])
// The sources were typechecked by the first run; this one only changes the module format.
run([
  ...["-p", "tsconfig.build.json", "--outDir", "dist/cjs", "--module", "commonjs", "--moduleResolution", "node10"],
  ...["--customConditions", "null"],
  ...["--declaration", "false", "--declarationMap", "false", "--noCheck"]
])
// Bundlers read sideEffects from the nearest package.json, which for dist/cjs is this one.
fs.writeFileSync("dist/cjs/package.json", JSON.stringify({ type: "commonjs", sideEffects: [] }, null, 2) + "\n")
for (const file of fs.readdirSync("dist/esm", { recursive: true, encoding: "utf8" })) {
  if (!file.endsWith(".d.ts") && !file.endsWith(".d.ts.map")) continue
  fs.mkdirSync(path.dirname(path.join("dist/cjs", file)), { recursive: true })
  fs.copyFileSync(path.join("dist/esm", file), path.join("dist/cjs", file))
}
