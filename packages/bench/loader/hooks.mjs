// Module hooks: `.ts` files are transpiled by TypeScript (no type check, no helpers added), and a
// relative `./x.js` that does not exist resolves to `./x.ts`, as under NodeNext resolution.
import { readFile } from "node:fs/promises"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const compilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.ESNext,
  isolatedModules: true,
  sourceMap: false
}

export async function resolve(specifier, context, next) {
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
    const output = ts.transpileModule(source, { fileName, compilerOptions })
    return { format: "module", source: output.outputText, shortCircuit: true }
  }
  return next(url, context)
}
