import { expect } from "@circuitry/testkit"

/**
 * Deep equality that is safe for Effect values. chai's `assert.deepStrictEqual` passes for
 * `Option.some(x)` against `Option.none()` (it compares them through their iterators, which every
 * Effect value has); vitest's `expect` with Effect's equality tester compares them properly.
 */
export const assertEqual = <A>(actual: A, expected: A, message?: string): void => {
  expect(actual, message).toStrictEqual(expected)
}
