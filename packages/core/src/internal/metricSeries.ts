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
  /** Its key in the owners' table of its registry. */
  readonly key: string
  /** The live owners that hold it: owners of the same name share their series. */
  holders: number
  update(value: number): void
  /** Takes the series out of its registry (a later update from elsewhere starts it afresh). */
  remove(): void
}

/** An owner's handle on a series. */
export interface Updater {
  update(value: number): void
}

/** The series held in each registry, by key. */
const heldIn = new WeakMap<Major.Registry, Map<string, SeriesHandle>>()

/** One owner's hold on a series: recording nowhere once its owner is released. */
class Hold implements Updater {
  constructor(public series: SeriesHandle | undefined) {}
  update(value: number): void {
    const series = this.series
    if (series !== undefined) series.update(value)
  }
}

/** What a released owner hands out: a hold on no series. */
const nowhere = new Hold(undefined)

export class Owner {
  private readonly holds: Array<Hold> = []
  private released = false
  constructor(readonly registry: Major.Registry) {}

  get isReleased(): boolean {
    return this.released
  }

  series(metric: Parameters<typeof Major.series>[1], attributes: ReadonlyArray<readonly [string, string]>): Updater {
    if (this.released) return nowhere
    let table = heldIn.get(this.registry)
    if (table === undefined) heldIn.set(this.registry, (table = new Map()))
    const key = Major.keyOf(metric, attributes)
    let series = table.get(key)
    if (series === undefined) {
      series = Major.series(this.registry, metric, attributes, key)
      table.set(key, series)
    }
    series.holders++
    const hold = new Hold(series)
    this.holds.push(hold)
    return hold
  }

  release(): void {
    if (this.released) return
    this.released = true
    const table = heldIn.get(this.registry)
    for (const hold of this.holds.splice(0)) {
      const series = hold.series!
      hold.series = undefined
      if (--series.holders > 0) continue
      series.remove()
      table?.delete(series.key)
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
