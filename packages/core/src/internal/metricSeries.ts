/**
 * Series held by an owner (a breaker, a limiter, a retry budget): each owner makes its series on
 * first use, updates them from synchronous code, and takes them out of the metric registry when it
 * is released, so that a registry fed an unbounded set of names holds the series of the owners
 * alive, not of every owner ever made. What differs between the majors (how a series is found and
 * updated, how it is taken out) is in metricSeries.effect3.ts / metricSeries.effect4.ts.
 */
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"
import * as Major from "#metricSeries"

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

/** A histogram's name, help text and bucket boundaries (finite ones: +Infinity is added). */
export interface HistogramSpec {
  readonly name: string
  readonly description: string
  readonly boundaries: ReadonlyArray<number>
}

/** One series in a registry, as each major's file makes it. */
export interface SeriesHandle {
  readonly update: (value: number) => void
  /** Takes the series out of its registry (a later update from elsewhere starts it afresh). */
  readonly remove: () => void
}

/** An owner's handle on one series. */
export interface Updater {
  update: (value: number) => void
}

/** A series and the live owners that hold it: owners of the same name share their series. */
interface Held {
  readonly key: string
  readonly series: SeriesHandle
  holders: number
}

/** The series held in each registry, by metric and attributes. */
const heldIn = new WeakMap<Major.Registry, Map<string, Held>>()
/** A number per metric, for the keys of `heldIn` (two metrics may share a name, if not a kind). */
const metricIds = new WeakMap<object, number>()
let nextMetricId = 0

const noop = (_: number): void => {}

export class Owner {
  private readonly held: Array<Held> = []
  private readonly updaters: Array<Updater> = []
  private released = false
  constructor(readonly registry: Major.Registry) {}

  get isReleased(): boolean {
    return this.released
  }

  series(metric: Parameters<typeof Major.series>[1], attributes: ReadonlyArray<readonly [string, string]>): Updater {
    if (this.released) return { update: noop }
    let table = heldIn.get(this.registry)
    if (table === undefined) heldIn.set(this.registry, (table = new Map()))
    let id = metricIds.get(metric)
    if (id === undefined) metricIds.set(metric, (id = nextMetricId++))
    const key = JSON.stringify([id, attributes])
    let held = table.get(key)
    if (held === undefined) {
      held = { key, series: Major.series(this.registry, metric, attributes), holders: 0 }
      table.set(key, held)
    }
    held.holders++
    this.held.push(held)
    // Swapped for a no-op on release rather than checked on each update: an update costs what
    // updating the series costs, nothing more.
    const updater: Updater = { update: held.series.update }
    this.updaters.push(updater)
    return updater
  }

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

export const make = (registry?: Major.Registry): Owner => new Owner(registry ?? Major.defaultRegistry())

export const scoped: Effect.Effect<Owner, never, Scope.Scope> = Effect.acquireRelease(
  Effect.map(Major.currentRegistry, (registry) => new Owner(registry)),
  (owner) => Effect.sync(() => owner.release())
)

/** How many series are held in a registry now, by owners of this module (for tests and benches). */
export const heldCount = (registry?: Major.Registry): number =>
  heldIn.get(registry ?? Major.defaultRegistry())?.size ?? 0

export const exponentialBoundaries = (options: {
  readonly start: number
  readonly factor: number
  readonly count: number
}): ReadonlyArray<number> =>
  Array.from({ length: options.count - 1 }, (_, i) => options.start * Math.pow(options.factor, i))
