/**
 * The edition layer: the few Effect APIs whose names or types differ between Effect 3 and Effect
 * 4, under one name each, so that a circuitry package is one source built for both majors. Each
 * build of `@circuitry/core` holds one edition (`major` says which); a package built for Effect 4
 * imports the Effect 4 build. Everything else a package uses is the same on both majors and is
 * imported from `effect` directly. See docs/editions.md.
 *
 * It is public so that a store or adapter written outside this repository can be one source on
 * both majors too; an app has no need of it.
 *
 * @since 0.2.0
 */
export * from "#edition"
