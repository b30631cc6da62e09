/**
 * The packages built from one source on both Effect majors (their tests run here on effect 4 as well
 * as at the root on effect 3). A package joins this list once its sources and tests are ported; see
 * docs/editions.md.
 */
export const ported: ReadonlyArray<string> = [
  "core",
  "retry",
  "limiter",
  "chaos",
  "breaker",
  "cache",
  "platform",
  "redis",
  "sql"
]
