// The version, dist-tag and changelog of each edition, from the one version changesets keeps in
// the packages' package.json (docs/editions.md, "Publishing both editions").
//
// Changesets versions the public packages as one fixed group, 0.M.P while circuitry is 0.x. Each
// edition is published as that version with Effect's major as its major: 3.M.P for Effect 3,
// 4.M.P for Effect 4 (as Effect's own packages are 4.x on Effect 4). The range npm saves for one
// (^3.M.P, ^4.M.P) never admits a version of the other, and the two never share a version.

/** The npm dist-tag each edition is published under: `latest` is what `npm install <name>` gives. */
export const distTags = { 3: "effect3", 4: "latest" }

/** The version the edition for Effect `edition` (3 or 4) publishes, for the repository's `version`. */
export const editionVersion = (version, edition) => {
  if (edition !== 3 && edition !== 4) throw new Error(`edition must be 3 or 4, got ${edition}`)
  const parsed = /^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$/.exec(version)
  if (parsed === null) throw new Error(`version ${JSON.stringify(version)} is not x.y.z (semver, no build metadata)`)
  const [, major, minor, patch, prerelease = ""] = parsed
  // Both editions' majors are taken (3 and 4): a 1.0.0 of circuitry has no edition major to go to.
  if (major !== "0") {
    throw new Error(
      `version ${version}: the editions publish 0.M.P as 3.M.P and 4.M.P; circuitry's own major ` +
        `(${major}) needs a new scheme first (docs/editions.md, "Publishing both editions")`
    )
  }
  return `${edition}.${minor}.${patch}${prerelease}`
}

const semverText = String.raw`\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?`

/**
 * The CHANGELOG.md an edition ships: the repository's (one changelog for both lines, whose entries
 * name the edition where the editions differ), with each version changesets writes in it (a
 * release's heading, `## 0.M.P`; a sibling it names, `@circuitry/core@0.M.P`) made the version of
 * that edition.
 */
export const editionChangelog = (text, edition) =>
  text
    .replace(
      new RegExp(String.raw`^(#{1,3} )v?(${semverText})[ \t]*$`, "gm"),
      (_, hashes, version) => hashes + editionVersion(version, edition)
    )
    .replace(
      new RegExp(String.raw`(@circuitry/[a-z0-9-]+@)(${semverText})\b`, "g"),
      (_, name, version) => name + editionVersion(version, edition)
    )
