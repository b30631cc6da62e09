/**
 * The Effect majors `pnpm bench` measures, and which groups each runs: Effect 3 runs every group;
 * Effect 4 runs the groups of the packages ported to one source on both majors
 * (editions/effect4/ported.ts), so that adding a package there runs its groups and its bench
 * script on Effect 4 as well. A child of either major loads the same sources; what differs is the
 * loader and the conditions it gets (see loader/).
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ported } from "../../../editions/effect4/ported.js"

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const root = path.resolve(pkg, "../..")

export interface Major {
  readonly major: 3 | 4
  /** The node flags of its children: the loader and the conditions. */
  readonly flags: ReadonlyArray<string>
  /** A package.json whose node_modules hold its `effect` (for the version in the report). */
  readonly anchor: string
  /** Whether the groups of a package (its folder name under packages/) run on it. */
  readonly runs: (pkg: string) => boolean
}

export const majors: ReadonlyArray<Major> = [
  {
    major: 3,
    flags: ["--import", path.join(pkg, "loader", "register.mjs")],
    anchor: path.join(pkg, "package.json"),
    runs: () => true
  },
  {
    major: 4,
    // `@circuitry/effect4` comes before `@circuitry/source` in every package's conditions: each
    // package's Effect 4 edition files, and its sources otherwise.
    flags: ["--conditions=@circuitry/effect4", "--import", path.join(pkg, "loader", "register.effect4.mjs")],
    anchor: path.join(root, "editions", "effect4", "package.json"),
    runs: (p) => ported.includes(p)
  }
]
