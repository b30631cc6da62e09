import { CircuitBreaker } from "@circuitry/breaker"
import * as Edition from "@circuitry/core/Edition"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { CacheEntry, CacheStore } from "../CacheStore.js"
import * as Metrics from "./metrics.js"

/** @internal */
export type ErrorReport = Data.TaggedEnum<{
  First: {
    readonly breaker: string
    readonly kind: string
    readonly operation: string
    readonly cause: Cause.Cause<unknown>
  }
  Suppressed: {
    readonly breaker: string
    readonly kind: string
    readonly operation: string
    readonly cause: Cause.Cause<unknown>
    readonly count: number
  }
}>

/** @internal */
export const ErrorReport = Data.taggedEnum<ErrorReport>()

/** @internal */
export interface GuardOptions {
  readonly onError?: ((report: ErrorReport) => Effect.Effect<void>) | undefined
}

/** @internal */
export const logReport = (report: ErrorReport): Effect.Effect<void> =>
  report._tag === "First"
    ? Effect.logWarning(
        `cache "${report.breaker}": ${report.kind} (repeats are counted, not logged, until the cache is healthy again)`,
        report.cause
      )
    : Effect.logWarning(
        `cache "${report.breaker}": ${report.count} more ${report.kind} while the cache was unhealthy`,
        report.cause
      )

/** The kind of a failure: the operation and the error's tag (or "defect"). */
const kindOf = (operation: string, cause: Cause.Cause<unknown>): string => {
  const failure = Edition.findError(cause)
  if (Option.isNone(failure)) return `${operation}: defect`
  const error = failure.value
  const tag =
    typeof error === "object" && error !== null && "_tag" in error && typeof error._tag === "string"
      ? error._tag
      : error instanceof Error
        ? error.name
        : typeof error
  return `${operation}: ${tag}`
}

const isShed = (cause: Cause.Cause<unknown>): boolean => {
  const failure = Edition.findError(cause)
  return Option.isSome(failure) && CircuitBreaker.isBreakerOpenError(failure.value)
}

interface Seen {
  readonly operation: string
  readonly cause: Cause.Cause<unknown>
  count: number
}

/**
 * Reports store errors without a flood. An episode starts with a store error and ends with the
 * first store operation that succeeds while the circuit is Closed. In an episode, the first error
 * of each kind is reported at once; later ones are counted and reported as one `Suppressed`
 * report when the episode ends.
 */
class Reporter {
  episode: Map<string, Seen> | undefined = undefined

  constructor(
    readonly breaker: CircuitBreaker.CircuitBreaker<unknown>,
    readonly hook: (report: ErrorReport) => Effect.Effect<void>
  ) {}

  private emit(report: ErrorReport): Effect.Effect<void> {
    // A hook that fails or dies must not turn a fallback into a failure.
    return Effect.asVoid(Effect.exit(Effect.suspend(() => this.hook(report))))
  }

  failed(operation: string, cause: Cause.Cause<unknown>): Effect.Effect<void> {
    const kind = kindOf(operation, cause)
    const episode = (this.episode ??= new Map())
    const seen = episode.get(kind)
    if (seen !== undefined) {
      seen.count++
      return Effect.void
    }
    episode.set(kind, { operation, cause, count: 0 })
    return this.emit(ErrorReport.First({ breaker: this.breaker.name, kind, operation, cause }))
  }

  readonly succeeded: Effect.Effect<void> = Effect.flatMap(
    Effect.suspend(() => this.breaker.state),
    (state) => {
      const episode = this.episode
      if (state._tag !== "Closed" || episode === undefined) return Effect.void
      this.episode = undefined
      const reports: Array<Effect.Effect<void>> = []
      for (const [kind, seen] of episode) {
        if (seen.count > 0) {
          reports.push(
            this.emit(
              ErrorReport.Suppressed({
                breaker: this.breaker.name,
                kind,
                operation: seen.operation,
                cause: seen.cause,
                count: seen.count
              })
            )
          )
        }
      }
      return Effect.all(reports, { discard: true })
    }
  )
}

/** @internal */
export const guard = <E>(
  store: CacheStore<E>,
  breaker: CircuitBreaker.CircuitBreaker<unknown>,
  options?: GuardOptions
): CacheStore<never> => {
  const reporter = new Reporter(breaker, options?.onError ?? logReport)

  /**
   * The outcome handlers of one operation, made once: the hot path allocates no closures. Each
   * outcome adds to its series of `circuitry_cache_operations_total`; an interruption to none.
   */
  const handlers = <A>(operation: Metrics.Operation, fallback: A, series: Metrics.OperationSeries<A>) => ({
    onSuccess: (a: A): Effect.Effect<A> => {
      series.ok(a)
      return reporter.episode === undefined ? Effect.succeed(a) : Effect.as(reporter.succeeded, a)
    },
    onFailure: (cause: Cause.Cause<unknown>): Effect.Effect<A> => {
      if (Edition.hasInterruptsOnly(cause)) return Effect.failCause(cause) as Effect.Effect<never>
      if (isShed(cause)) {
        series.shed(1)
        return Effect.succeed(fallback)
      }
      series.error(1)
      return Effect.as(reporter.failed(operation, cause), fallback)
    }
  })
  const onGet = handlers<Option.Option<string>>("get", Option.none(), Metrics.operations.get)
  const onGetEntry = handlers<Option.Option<CacheEntry>>("get", Option.none(), Metrics.operations.get)
  const onKeys = handlers<ReadonlyArray<string>>("keys", [], Metrics.operations.keys)
  const onSize = handlers<number>("size", 0, Metrics.operations.size)
  const onPing = handlers<boolean>("ping", false, Metrics.operations.ping)
  const onSet = handlers<boolean>("set", false, Metrics.operations.set)
  const onTouch = handlers<boolean>("touch", false, Metrics.operations.touch)
  const onDelete = handlers<boolean>("delete", false, Metrics.operations.delete)

  const read = <A>(effect: Effect.Effect<A, E>, on: ReturnType<typeof handlers<A>>): Effect.Effect<A> =>
    Effect.matchCauseEffect(breaker.execute(effect), on)

  // Writes are repair traffic: while the circuit is open they still reach the store, once per
  // episode until one fails. The mark covers the admission and the store call, not the error hook.
  const write = (effect: Effect.Effect<boolean, E>, on: ReturnType<typeof handlers<boolean>>): Effect.Effect<boolean> =>
    Effect.matchCauseEffect(CircuitBreaker.repairing(breaker.execute(effect)), on)

  const getEntry = store.getEntry
  return {
    get: (key) => read(store.get(key), onGet),
    set: (key, value, options) => write(store.set(key, value, options), onSet),
    touch: (key, options) => write(store.touch(key, options), onTouch),
    delete: (key) => write(store.delete(key), onDelete),
    keys: (prefix) => read(store.keys(prefix), onKeys),
    get size() {
      return read(store.size, onSize)
    },
    get ping() {
      return read(store.ping, onPing)
    },
    ...(getEntry !== undefined ? { getEntry: (key: string) => read(getEntry(key), onGetEntry) } : {})
  }
}
