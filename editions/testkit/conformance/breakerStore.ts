/**
 * The `BreakerStore` contract as one suite per capability of the port, for every backend (memory,
 * Redis, Redis Cluster, SQLite, PostgreSQL, and any future one), the way Effect's PersistedQueue
 * tests run one suite over several layers:
 *
 * ```ts
 * import { storeSuite } from "@circuitry/testkit/conformance/breakerStore"
 * storeSuite([["Redis", RedisBreakerStore.layer({ prefix })]])
 * ```
 *
 * A backend runs the verdict channel's suite (every store offers it) and the suite of each
 * capability it offers (`offers`, every one by default): shared counts, probe leases, fleet
 * membership. It must offer exactly those: a circuit missing one it declares, or offering one it
 * does not declare, fails the first test.
 *
 * Every test joins circuits of a name of its own, so one store (one layer) serves the whole suite.
 * Verdicts cross as durations and the store dates them on its own clock (the memory store's Effect
 * Clock, a server's clock): what a member reads back is the saved durations aged by the store's
 * clock, compared within SLACK (real time passes between a save and a read on a real server).
 * Lease and count times are passed in as the breakers pass them (from their Clock).
 */
import type { BreakerStore } from "@circuitry/breaker"
import { Effect } from "effect"
import type { Layer } from "effect"
import { assert, describe, layer as sharedLayer } from "@circuitry/testkit"
import { countsSuite } from "./breakerStore/counts.js"
import { fleetSuite } from "./breakerStore/fleet.js"
import { probesSuite } from "./breakerStore/probes.js"
import { Corruptions, freshName, join, type SuiteIt } from "./breakerStore/support.js"
import { verdictSuite } from "./breakerStore/verdict.js"

export { Corruptions } from "./breakerStore/support.js"

/** The suite of each optional capability, by the `SharedCircuit` field that holds it. */
export const capabilitySuites: Readonly<Record<BreakerStore.Capability, (it: SuiteIt) => void>> = {
  counts: countsSuite,
  probes: probesSuite,
  fleet: fleetSuite
}

const every: ReadonlyArray<BreakerStore.Capability> = ["counts", "probes", "fleet"]

/** What a backend says of itself beside its layer. */
export interface Flags {
  /** The backend provides `Corruptions` beside its store: the verdict suite spoils its stored state. */
  readonly corruptible?: true
  /** The optional capabilities it offers (default: every one); their suites run, and no others. */
  readonly offers?: ReadonlyArray<BreakerStore.Capability>
}

/**
 * Registers the contract tests for each `[name, layer, flags]`: the verdict channel's, then the
 * suite of each capability the backend offers. The layer is built once per backend.
 */
export const storeSuite = (
  backends: ReadonlyArray<
    | readonly [string, Layer.Layer<BreakerStore.BreakerStore, unknown>]
    | readonly [string, Layer.Layer<BreakerStore.BreakerStore, unknown>, Flags & { readonly corruptible?: undefined }]
    | readonly [string, Layer.Layer<BreakerStore.BreakerStore | Corruptions, unknown>, Flags]
  >
): void => {
  for (const [backend, given, flags] of backends) {
    const layer = given as Layer.Layer<BreakerStore.BreakerStore | Corruptions, unknown>
    const offers = flags?.offers ?? every
    sharedLayer(layer, { timeout: "30 seconds" })(`BreakerStore contract: ${backend}`, (it) => {
      it.scoped(`offers the verdict channel and exactly ${offers.length === 0 ? "no other" : offers.join(", ")}`, () =>
        Effect.gen(function* () {
          const circuit = yield* join(freshName())
          assert.isDefined(circuit.verdict)
          for (const capability of every) {
            assert.strictEqual(circuit[capability] !== undefined, offers.includes(capability), capability)
          }
        })
      )
      describe("verdict channel", () => verdictSuite(it, flags?.corruptible === true))
      for (const capability of offers) describe(capability, () => capabilitySuites[capability](it))
    })
  }
}
