// The CommonJS entry point, run with plain `node app.cjs '<config json>'`.
"use strict"
const breaker = require("@circuitry/breaker")
const cache = require("@circuitry/cache")
const platform = require("@circuitry/platform")
const redis = require("@circuitry/redis")
const sql = require("@circuitry/sql")
const platformNode = require("@effect/platform-node")
const effect = require("effect")
const scenario = require("./scenario.cjs")

const main = async () => {
  const config = JSON.parse(process.argv[2])
  const modules = {}
  for (const specifier of config.modules) modules[specifier] = Object.keys(require(specifier)).sort()
  let internal = "loaded"
  try {
    require(config.internal)
  } catch (error) {
    internal = error.code
  }
  const result = await scenario({ effect, breaker, cache, redis, sql, platform, platformNode }, config)
  console.log(JSON.stringify({ modules, internal, ...result }))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
