/**
 * Timeouts for tests whose work is CPU alone (simulations in virtual time, property tests): how
 * long they take says nothing of the code under test, only of how busy the machine is. Such a
 * test's timeout is stated relative to a sample of its own work, timed on this machine when the
 * test file is collected, never as a bare constant. Imported by relative path from each package's
 * tests (`../../../test-support/calibrate.js`), and by packages/bench for its groups' time limits;
 * it is no package of its own.
 */

/** What a timeout allows beyond the sample's estimate: the machine's load moves while the test runs. */
const MARGIN = 4

/** The shared default (vitest.shared.ts): an idle machine keeps the timeout it always had. */
const FLOOR_MILLIS = 30_000

/** How long `sample` takes on this machine now: milliseconds of wall time, the machine's load included. */
export const timeSample = async (sample: () => unknown): Promise<number> => {
  const start = performance.now()
  await sample()
  return performance.now() - start
}

/**
 * The time limit for work estimated at `times` a sample that took `sampleMillis`: with a margin
 * (default 4), and never below a floor (default the shared 30 s). No timing in it, so that what it
 * decides can be tested with numbers (packages/bench sizes its groups' limits with it).
 */
export const timeoutFrom = (
  sampleMillis: number,
  times: number,
  options?: { readonly margin?: number | undefined; readonly floorMillis?: number | undefined }
): number =>
  Math.max(options?.floorMillis ?? FLOOR_MILLIS, Math.ceil(sampleMillis * times * (options?.margin ?? MARGIN)))

/**
 * Times `sample`, a `1 / times` share of a test's work, and returns the test's timeout: `times`
 * the sample's duration, with a margin, and never below the shared default.
 */
export const timeoutFor = async (sample: () => Promise<unknown>, times: number): Promise<number> =>
  timeoutFrom(await timeSample(sample), times)
