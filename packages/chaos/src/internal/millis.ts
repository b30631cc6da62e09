import * as OptionRules from "@circuitry/core/OptionRules"

/**
 * A duration option's milliseconds, by core's one rule (an infinite duration taken: a deadline or a
 * window's end may be never); NaN when it is no duration >= 0, which every check here refuses.
 *
 * @internal
 */
export const millisOf = (input: unknown): number => OptionRules.millis(input, { infinite: true }) ?? Number.NaN
