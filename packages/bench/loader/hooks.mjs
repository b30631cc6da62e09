// Module hooks: `.ts` files are transpiled by TypeScript (no type check, no helpers added), and a
// relative `./x.js` that does not exist resolves to `./x.ts`, as under NodeNext resolution.
// Outputs are cached in packages/bench/.tmp by content, so that TypeScript itself (a large module)
// is loaded only when a source changed. Registered with `data.effect` (register.effect4.mjs), every
// import of `effect` is resolved from that folder instead, whoever imports it: the Effect 4 run.
import { createHash } from "node:crypto"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"

const cacheDir = fileURLToPath(new URL("../.tmp/transpiled/", import.meta.url))
let typescript
/** A file in the folder whose node_modules hold the `effect` to load, when not the importer's own. */
let effectAnchor

export async function initialize(data) {
  effectAnchor = data?.effect
}

const transpile = async (fileName, source) => {
  const key = createHash("sha1").update(fileName).update("\0").update(source).digest("hex")
  const cached = `${cacheDir}${key}.js`
  try {
    return await readFile(cached, "utf8")
  } catch {
    // not cached yet
  }
  typescript ??= (await import("typescript")).default
  const output = typescript.transpileModule(source, {
    fileName,
    compilerOptions: {
      target: typescript.ScriptTarget.ES2022,
      module: typescript.ModuleKind.ESNext,
      isolatedModules: true,
      sourceMap: false
    }
  }).outputText
  await mkdir(cacheDir, { recursive: true })
  await writeFile(cached, output)
  return output
}

export async function resolve(specifier, context, next) {
  if (effectAnchor !== undefined && /^effect(\/|$)/.test(specifier)) {
    return next(specifier, { ...context, parentURL: effectAnchor })
  }
  try {
    return await next(specifier, context)
  } catch (error) {
    if (specifier.endsWith(".js") && /^(\.|\/|file:)/.test(specifier)) {
      return next(`${specifier.slice(0, -3)}.ts`, context)
    }
    throw error
  }
}

export async function load(url, context, next) {
  if (url.startsWith("file:") && /\.m?ts$/.test(url)) {
    const fileName = fileURLToPath(url)
    const source = await readFile(fileName, "utf8")
    return { format: "module", source: await transpile(fileName, source), shortCircuit: true }
  }
  return next(url, context)
}
