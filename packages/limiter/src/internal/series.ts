/**
 * Metric series owned by a limiter or a shedder, on either Effect major: each owner makes its
 * series on first use (an idle limiter in a big registry holds none), updates them from
 * synchronous code, and takes them out of the metric registry when it is released, so that a
 * registry fed an unbounded set of names holds the series of the limiters it holds, not of every
 * limiter it ever made. What differs between the majors (how a series is found, how it is taken
 * out) is in metrics.effect3.ts / metrics.effect4.ts, imported as `#metrics`.
 */
import * as Major from "#metrics"

/** A counter's name and help text. */
export interface CounterSpec {
  readonly name: string
  readonly description: string
}

/** A gauge's name and help text. */
export interface GaugeSpec {
  readonly name: string
  readonly description: string
}

/** A histogram's name, help text and exponential boundaries. */
export interface HistogramSpec {
  readonly name: string
  readonly description: string
  readonly exponential: { readonly start: number; readonly factor: number; readonly count: number }
}

/** One series in a registry, as each major's file makes it. */
export interface Series {
  readonly update: (value: number) => void
  /** Takes the series out of its registry (a later update from elsewhere starts it afresh). */
  readonly remove: () => void
}

export type Registry = Major.Registry

/** The registry of the fiber that makes an owner: its series go there. */
export const currentRegistry = Major.currentRegistry

export const counter = Major.counter
export const gauge = Major.gauge
export const histogram = Major.histogram

/**
 * One owner's handle on a series: `update` is the series' own function until the owner is
 * released, then a no-op. Swapped rather than checked, so that an update costs what updating the
 * series costs, nothing more: every admitted call through a limiter makes four.
 */
export interface Updater {
  update: (value: number) => void
}

/** A series and the live owners that hold it: owners of the same name share their series. */
interface Held {
  readonly key: string
  readonly series: Series
  holders: number
}

/** The series held in each registry, by metric name and attributes. */
const heldIn = new WeakMap<Registry, Map<string, Held>>()

const noop = (_: number): void => {}

/** The series of one owner, all released together. */
export class Holdings {
  private readonly held: Array<Held> = []
  private readonly updaters: Array<Updater> = []
  private released = false
  constructor(private readonly registry: Registry) {}

  /**
   * The updater of one series of `metric` (made with `counter`, `gauge` or `histogram` above),
   * with these attributes in this order. Make it once per series. After `release` it records
   * nowhere, so a call that finishes after its limiter was dropped cannot bring a series back.
   */
  series(
    metric: Parameters<typeof Major.series>[1],
    name: string,
    attributes: ReadonlyArray<readonly [string, string]>
  ): Updater {
    if (this.released) return { update: noop }
    let table = heldIn.get(this.registry)
    if (table === undefined) heldIn.set(this.registry, (table = new Map()))
    const key = JSON.stringify([name, attributes])
    let held = table.get(key)
    if (held === undefined) {
      held = { key, series: Major.series(this.registry, metric, attributes), holders: 0 }
      table.set(key, held)
    }
    held.holders++
    this.held.push(held)
    const updater: Updater = { update: held.series.update }
    this.updaters.push(updater)
    return updater
  }

  /** Takes out of the registry each series no other live owner holds. Idempotent. */
  release(): void {
    if (this.released) return
    this.released = true
    for (const updater of this.updaters.splice(0)) updater.update = noop
    const table = heldIn.get(this.registry)
    for (const held of this.held.splice(0)) {
      if (--held.holders > 0) continue
      held.series.remove()
      table?.delete(held.key)
    }
  }
}
