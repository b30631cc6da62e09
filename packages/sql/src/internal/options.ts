/**
 * The store's options: their rules (a broken one is an `InvalidSqlOptions` naming it) and their
 * defaults.
 */
import { OptionRules } from "@circuitry/core"
import * as Edition from "@circuitry/core/Edition"
import * as Duration from "effect/Duration"
import * as Schema from "effect/Schema"
import type { Options } from "../SqlBreakerStore.js"
import { InvalidSqlOptions } from "./errors.js"

/** The public options (SqlBreakerStore.ts documents them). */
export type { Options }

/** @internal */
export interface Resolved {
  readonly table: string
  readonly pollInterval: Duration.Duration
  readonly migrate: boolean
  readonly listen: boolean
  readonly listenInterval: Duration.Duration
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]{0,47}$/

const Identifier = Edition.refine(
  Schema.String,
  (table) => table.split(".").length <= 2 && table.split(".").every((part) => identifier.test(part)),
  'a SQL identifier (letters, digits, "_", at most 48 characters, optionally "schema.table")'
)

const OptionsSchema = Schema.Struct({
  table: Schema.optional(Identifier),
  pollInterval: Schema.optional(OptionRules.PositiveMillis),
  migrate: Schema.optional(OptionRules.Flag),
  listen: Schema.optional(OptionRules.Flag),
  listenInterval: Schema.optional(OptionRules.PositiveMillis)
})

/** @internal */
export const resolve = (options: Options | undefined): Edition.Result<Resolved, InvalidSqlOptions> =>
  Edition.Result.map(
    OptionRules.decode(OptionsSchema, options, (message) => new InvalidSqlOptions({ message })),
    (o) => ({
      table: o.table ?? "circuitry_breakers",
      pollInterval: Duration.millis(o.pollInterval ?? 250),
      migrate: o.migrate ?? true,
      listen: o.listen ?? true,
      listenInterval: Duration.millis(o.listenInterval ?? 1_000)
    })
  )
