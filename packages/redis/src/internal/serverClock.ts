/**
 * The server's clock, in epoch milliseconds, for the Lua scripts: the one clock that dates and ages
 * verdicts, whatever the members' clocks say (a verdict arrives as durations: made `age` ago, open
 * `remaining` more).
 *
 * @internal
 */
export const NOW = `
local function nowMillis()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function digits(n) return string.format('%.0f', n) end`
