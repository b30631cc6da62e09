// The manifest a tarball ships, as `pnpm pack` writes it (after `workspace:^` became a real range).
// release-pack.mjs hands this file to `pnpm pack` alone, as its pnpmfile: `pnpm install` never reads
// it, so the lockfile does not depend on it. Left out: what only this repository uses.
const strip = (exports) => {
  if (typeof exports !== "object" || exports === null) return exports
  // The "@circuitry/source" condition sends the repository's own imports to src/*.ts.
  return Object.fromEntries(
    Object.entries(exports)
      .filter(([condition]) => condition !== "@circuitry/source")
      .map(([key, value]) => [key, strip(value)])
  )
}

module.exports = {
  hooks: {
    beforePacking(manifest) {
      // `build`, `mutate`: the repository's scripts (no package has one an install needs).
      delete manifest.scripts
      // The versions this repository tests with; a user's install reads the peer ranges.
      delete manifest.devDependencies
      manifest.exports = strip(manifest.exports)
      return manifest
    }
  }
}
