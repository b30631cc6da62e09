// The ESM entry point, run with plain `node app.mjs '<config json>'`.
import * as breaker from "@circuitry/breaker"
import * as cache from "@circuitry/cache"
import * as platform from "@circuitry/platform"
import * as redis from "@circuitry/redis"
import * as sql from "@circuitry/sql"
import * as platformNode from "@effect/platform-node"
import * as effect from "effect"
import scenario from "./scenario.cjs"

const config = JSON.parse(process.argv[2])
const modules = {}
for (const specifier of config.modules) modules[specifier] = Object.keys(await import(specifier)).sort()
const internal = await import(config.internal).then(
  () => "loaded",
  (error) => error.code
)
const result = await scenario({ effect, breaker, cache, redis, sql, platform, platformNode }, config)
console.log(JSON.stringify({ modules, internal, ...result }))
