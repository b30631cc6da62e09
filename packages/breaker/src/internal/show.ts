/** Shows an input in an options message: the rule every circuitry package shares, kept in core. */
export { show } from "@circuitry/core/OptionRules"
