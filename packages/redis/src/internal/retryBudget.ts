import * as Edition from "@circuitry/core/Edition"
import { OptionRules } from "@circuitry/core"
import * as MetricSeries from "@circuitry/core/MetricSeries"
import { RetryBudget } from "@circuitry/retry"
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Queue from "effect/Queue"
import type * as Scope from "effect/Scope"
import { acquire, type Client as Connected, connect, failFastOptions, within } from "./client.js"
import * as Keys from "./keys.js"
import { type ClusterOption, InvalidRedisOptions, resolveDeadline, resolveTarget } from "./options.js"

/** @internal */
export interface Options extends RetryBudget.Options {
  readonly url?: string | undefined
  readonly cluster?: ClusterOption | undefined
  readonly prefix?: string | undefined
  readonly deadline?: Edition.DurationInput | undefined
  /** @deprecated the old name of `deadline` */
  readonly timeout?: Edition.DurationInput | undefined
}

const DEFAULT_PREFIX = "circuitry:retry-budget:"
/** The window is kept as this many buckets, as the in-memory budget does. */
const BUCKETS = 10
/** After Redis failed or was late, decide locally for this long before asking it again. */
const LOCAL_FOR_MILLIS = 1_000
/** How long startup waits for the server before going on without it (real time). */
const STARTUP_WAIT_MILLIS = 1_000

// -- Lua: each atomic step, with `now` (as a bucket index) passed in from the Effect Clock ------

// KEYS[1]: the current deposit bucket. ARGV: count, ttl.
const DEPOSIT = `
redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`

// KEYS: BUCKETS deposit buckets, BUCKETS withdrawal buckets (oldest first, the current one last),
// then the floor's hash. ARGV: buckets, ratio, now, minPerSecond, floor capacity, ttl, spend (1 or 0).
// Tokens from deposits first, then from the floor (a token bucket refilled at minPerSecond).
const WITHDRAW = `
local n = tonumber(ARGV[1])
local ratio = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local rate = tonumber(ARGV[4])
local cap = tonumber(ARGV[5])
local ttl = tonumber(ARGV[6])
local spend = ARGV[7] == '1'
local deposits, withdrawals = 0, 0
for i = 1, n do deposits = deposits + (tonumber(redis.call('GET', KEYS[i])) or 0) end
for i = n + 1, 2 * n do withdrawals = withdrawals + (tonumber(redis.call('GET', KEYS[i])) or 0) end
local pool = deposits * ratio - withdrawals
local floorKey = KEYS[2 * n + 1]
local stored = redis.call('HMGET', floorKey, 'tokens', 'at')
local tokens = tonumber(stored[1]) or cap
local at = tonumber(stored[2]) or now
if now > at then
  tokens = math.min(cap, tokens + (now - at) * rate / 1000)
  at = now
end
if not spend then
  return math.floor(math.max(0, pool) + tokens + 1e-9)
end
if pool + 1e-9 >= 1 then
  redis.call('INCR', KEYS[2 * n])
  redis.call('PEXPIRE', KEYS[2 * n], ttl)
  return 1
end
if tokens + 1e-9 < 1 then return 0 end
redis.call('HSET', floorKey, 'tokens', tostring(tokens - 1), 'at', tostring(at))
redis.call('PEXPIRE', floorKey, ARGV[8])
return 1`

type Client = Connected & {
  circuitryBudgetDeposit(key: string, count: string, ttl: string): Promise<number>
  circuitryBudgetWithdraw(...args: Array<string | number>): Promise<number>
}

const defineCommands = (client: Connected): Client => {
  client.defineCommand("circuitryBudgetDeposit", { numberOfKeys: 1, lua: DEPOSIT })
  client.defineCommand("circuitryBudgetWithdraw", { numberOfKeys: 2 * BUCKETS + 1, lua: WITHDRAW })
  return client as Client
}

const DEFAULT_DEADLINE_MILLIS = 100

const invalid = (message: string) => new InvalidRedisOptions({ message: `RedisRetryBudget ${message}` })

/**
 * A budget that the whole fleet shares through Redis, in front of a local one.
 *
 * - Deposits go into the local budget at once and to Redis in the background, batched: one
 *   INCRBY in flight at a time carries every deposit made meanwhile (a first attempt never waits
 *   on the network). A batch that fails is dropped: the fleet budget is then smaller, never larger.
 * - A withdrawal asks Redis (one Lua step), within `deadline`. When Redis fails or is late, this
 *   instance decides on its local budget for the next second, and asks Redis again after that.
 *
 * @internal
 */
export const make = (options?: Options): Effect.Effect<RetryBudget.RetryBudget, InvalidRedisOptions, Scope.Scope> =>
  Effect.gen(function* () {
    const o = options ?? {}
    // The local budget's rules are the retry package's; a broken one is this package's error too.
    const local = yield* Effect.mapError(
      RetryBudget.make(o),
      (e) => new InvalidRedisOptions({ message: e.message.replace(/^RetryBudget /, "RedisRetryBudget ") })
    )
    const target = yield* Edition.fromResult(resolveTarget(o, invalid))
    const prefix = o.prefix ?? DEFAULT_PREFIX
    if (typeof prefix !== "string") return yield* invalid(`prefix must be a string, got ${OptionRules.show(prefix)}`)
    const deadlineMillis = yield* Edition.fromResult(resolveDeadline(o, DEFAULT_DEADLINE_MILLIS, invalid))
    // The same arithmetic as the local budget, on the same (validated) options.
    const ratio = o.ratio ?? 0.1
    const minPerSecond = o.minPerSecond ?? 10
    const windowMillis = OptionRules.millis(o.window ?? "10 seconds")!
    const bucketMillis = windowMillis / BUCKETS
    const capacity = minPerSecond === 0 ? 0 : Math.max(1, minPerSecond)
    const ttl = String(Math.ceil(windowMillis + bucketMillis))
    // The floor's hash lives at least as long as an empty floor takes to fill up again.
    const floorTtl = String(Math.max(Number(ttl), minPerSecond === 0 ? 0 : Math.ceil((1000 * capacity) / minPerSecond)))
    // The budget's keys share the hash tag `{name}` (one Redis Cluster slot): see keys.ts.
    const key = Keys.of(prefix, local.name)
    const bucketOf = (now: number) => Math.floor(now / bucketMillis)

    const client = defineCommands(yield* acquire(target, failFastOptions, "commands"))
    yield* Effect.promise(() => within(connect(client), STARTUP_WAIT_MILLIS).catch(() => undefined))

    const ask = (now: number, spend: boolean) =>
      Effect.tryPromise(() => {
        const current = bucketOf(now)
        const keys: Array<string> = []
        for (let i = BUCKETS - 1; i >= 0; i--) keys.push(key(`d:${current - i}`))
        for (let i = BUCKETS - 1; i >= 0; i--) keys.push(key(`w:${current - i}`))
        keys.push(key("floor"))
        return client.circuitryBudgetWithdraw(
          ...keys,
          BUCKETS,
          ratio,
          now,
          minPerSecond,
          capacity,
          ttl,
          spend ? "1" : "0",
          floorTtl
        )
      }).pipe(Effect.timeout(Duration.millis(deadlineMillis)))

    // Decide locally until this time (Effect Clock) after Redis failed or was late.
    let localUntil = Number.NEGATIVE_INFINITY
    const withRedis = <A>(
      now: number,
      spend: boolean,
      onRedis: (answer: number) => Effect.Effect<A>,
      onLocal: Effect.Effect<A>
    ): Effect.Effect<A> =>
      now < localUntil
        ? onLocal
        : Effect.matchEffect(ask(now, spend), {
            onSuccess: onRedis,
            onFailure: () =>
              Effect.suspend(() => {
                localUntil = now + LOCAL_FOR_MILLIS
                return onLocal
              })
          })

    // Deposits: counted here, sent by one writer (the owner of `pending`), one batch at a time.
    let pending = 0
    const signal = yield* Queue.sliding<void>(1)
    const flush = Effect.gen(function* () {
      yield* Queue.take(signal)
      const count = pending
      pending = 0
      if (count === 0) return
      const now = yield* Clock.currentTimeMillis
      yield* Effect.tryPromise(() => client.circuitryBudgetDeposit(key(`d:${bucketOf(now)}`), String(count), ttl)).pipe(
        Effect.timeout(Duration.millis(deadlineMillis)),
        Effect.ignore
      )
    })
    yield* Effect.forkScoped(Effect.forever(flush))

    // Decisions made by Redis are counted here; the local budget counts its own. Both owners hold
    // the same series (one name), which leave the registry when the last of them is released, with
    // the scope; each series is made on its first decision.
    const owner = yield* MetricSeries.scoped
    const series = (outcome: string) =>
      owner.series(RetryBudget.retriesTotal, [
        ["budget", local.name],
        ["outcome", outcome]
      ])
    let allowed: MetricSeries.Updater | undefined
    let denied: MetricSeries.Updater | undefined
    const decided = (spent: boolean) =>
      Effect.sync(() => {
        if (spent) (allowed ??= series("allowed")).update(1)
        else (denied ??= series("denied")).update(1)
        return spent
      })

    const budget: RetryBudget.RetryBudget = {
      [RetryBudget.TypeId]: RetryBudget.TypeId,
      name: local.name,
      deposit: Effect.andThen(
        local.deposit,
        Effect.sync(() => {
          pending++
          Edition.offerUnsafe(signal, undefined)
        })
      ),
      tryWithdraw: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        withRedis(now, true, (answer) => decided(answer === 1), local.tryWithdraw)
      ),
      available: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        withRedis(now, false, Effect.succeed, local.available)
      )
    }
    return budget
  })
