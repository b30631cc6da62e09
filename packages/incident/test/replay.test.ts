import { assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as CacheStall from "../src/cacheStall/CacheStall.js"
import * as CacheStallIncident from "../src/cacheStall/incident.js"
import * as Flags from "../src/Flags.js"
import { incidents } from "../src/incidents.js"
import * as Report from "../src/Report.js"
import * as Svg from "../src/Svg.js"
import { small } from "./small.js"

const config = small

const sum = (
  seconds: ReadonlyArray<CacheStall.Second>,
  from: number,
  to: number,
  f: (s: CacheStall.Second) => number
) => seconds.slice(from, to).reduce((total, s) => total + f(s), 0)

describe("the cache-stall replay", () => {
  it.effect(
    "runs the same traffic through every strategy, and each strategy behaves as designed",
    () =>
      Effect.gen(function* () {
        const result = yield* CacheStall.run(config)
        const lane = (name: string) => result.lanes.find((l) => l.name === name)!
        const [none, shed, repair, flight] = [lane("none"), lane("shed"), lane("repair"), lane("single-flight")]
        assert.deepStrictEqual(
          result.lanes.map((l) => l.name),
          ["none", "shed", "repair", "single-flight"]
        )

        // Before the stall the cache is healthy: the same requests and misses everywhere, and the same
        // queries for every cache-aside strategy (single flight sends fewer: it shares loads).
        for (const l of result.lanes) {
          assert.strictEqual(
            sum(l.seconds, 0, 40, (s) => s.requests),
            300 * 40
          )
          assert.deepStrictEqual(
            l.seconds.slice(0, 10).map((s) => [s.requests, s.misses, s.failed]),
            none.seconds.slice(0, 10).map((s) => [s.requests, s.misses, s.failed])
          )
        }
        assert.deepStrictEqual(shed.seconds.slice(0, 10), none.seconds.slice(0, 10))
        assert.deepStrictEqual(repair.seconds.slice(0, 10), none.seconds.slice(0, 10))
        assert.isAtMost(
          sum(flight.seconds, 0, 10, (s) => s.queries),
          sum(none.seconds, 0, 10, (s) => s.queries)
        )
        assert.isAbove(
          sum(none.seconds, 0, 10, (s) => s.misses),
          0
        )

        // No breaker, no transitions; the others open when the stall ends (the dropped connection
        // fails every stuck call at once) and close exactly 10 s later, at the first probe.
        assert.deepStrictEqual(none.transitions, [])
        for (const l of [shed, repair, flight]) {
          assert.deepStrictEqual(
            l.transitions.map((t) => [t.from, t.to, t.at]),
            [
              ["Closed", "Open", 13_000],
              ["Open", "HalfOpen", 23_000],
              ["HalfOpen", "Closed", 23_000]
            ],
            l.name
          )
        }

        // The stall holds every request that reads the cache in it until it ends, breaker or not: the
        // breakers only see failures when the stuck calls fail together, so they spare none of them.
        // A request at t waits until 13 s (then up to ten times the database's idle latency): the p99
        // of seconds 10 and 11 is past the 1 s deadline in every lane. Single flight's cap (16 loads
        // here) then queues the burst of misses, so its requests of second 12 wait past it too.
        for (const l of result.lanes) {
          assert.deepStrictEqual(
            l.seconds.slice(10, 12).map((s) => s.p99Millis > config.deadlineMillis),
            [true, true],
            l.name
          )
          assert.isAtLeast(l.summary.worstP99Millis, 2_900, l.name)
        }
        for (const l of [none, shed, repair]) {
          assert.isAtMost(l.seconds[12]!.p99Millis, config.deadlineMillis, l.name)
          assert.strictEqual(l.summary.slowSeconds, 2, l.name)
          assert.isAtMost(l.summary.worstP99Millis, 3_000 + 10 * config.dbLatencyMillis, l.name)
        }
        assert.isAbove(flight.seconds[12]!.p99Millis, config.deadlineMillis)

        // While open, every read is shed: every request misses.
        for (const l of [shed, repair, flight]) {
          assert.strictEqual(
            sum(l.seconds, 15, 22, (s) => s.misses),
            sum(l.seconds, 15, 22, (s) => s.requests)
          )
        }
        // Without a breaker, the cache is back when the stall ends.
        assert.isBelow(
          sum(none.seconds, 15, 22, (s) => s.misses),
          sum(none.seconds, 15, 22, (s) => s.requests) / 2
        )

        // Repair kept the cache warm while shedding reads; shedding writes too left it cold.
        const afterClose = (l: CacheStall.Lane) => sum(l.seconds, 24, 30, (s) => s.misses)
        assert.isBelow(afterClose(repair), afterClose(shed))
        // Single flight sends the database fewer queries while the circuit is open (one per key in
        // flight), so the database refuses fewer and fewer requests fail.
        const open = (l: CacheStall.Lane, f: (s: CacheStall.Second) => number) => sum(l.seconds, 14, 22, f)
        assert.isBelow(
          open(flight, (s) => s.queries),
          open(repair, (s) => s.queries)
        )
        assert.isBelow(
          open(flight, (s) => s.refused),
          open(repair, (s) => s.refused)
        )
        assert.isBelow(
          open(flight, (s) => s.failed),
          open(repair, (s) => s.failed)
        )
        // And the database turned requests away only where it was flooded.
        assert.isAbove(repair.summary.failed, none.summary.failed)
        assert.strictEqual(repair.summary.recoverySeconds !== undefined, true)

        // The same flags give the same numbers.
        const again = yield* CacheStall.run(config)
        assert.deepStrictEqual(
          again.lanes.map((l) => l.seconds),
          result.lanes.map((l) => l.seconds)
        )

        // Reports: a table row per interval, a verdict per strategy, a sparkline row per strategy,
        // and an SVG with a panel per strategy and quantity (one line each), the capacity drawn in
        // every database panel and each strategy's own open episodes shaded.
        const outcome = CacheStallIncident.outcome(result)
        const table = Report.table(outcome, 10).split("\n")
        assert.strictEqual(table.length, 2 + 4)
        assert.include(table[4]!, "20-30s")
        const verdicts = Report.verdicts(outcome, false).split("\n")
        assert.deepStrictEqual(
          verdicts.slice(0, 4).map((line) => line.slice(0, 1)),
          ["✓", "✗", "✗", "✓"]
        )
        assert.match(
          verdicts[1]!,
          /^✗ shed +database over capacity \d+ s \(peak [\d,]+ q\/s\); [\d,]+ failed requests; p99 [\d.]+ s at worst, past the deadline 2 s;/
        )
        // What earns the tick is said under the verdicts, and on the chart.
        assert.strictEqual(verdicts[4], `(✓ ${CacheStallIncident.criteria(config)}; ✗ otherwise)`)
        assert.strictEqual(
          CacheStallIncident.criteria(config),
          "database over its capacity at most 2 s (the stall's own burst), and misses back to normal before the end"
        )
        const lines = Report.sparklines(outcome, outcome.panels[1]!, { width: 40, color: false }).split("\n")
        assert.match(lines[0]!, /^ {2}database queries\/s, log scale, top [\d,]+; capacity 200\/s$/)
        assert.strictEqual(lines.filter((line) => line.includes("│")).length, 4)
        const svg = Svg.render(outcome)
        // Standalone, the chart carries its title; inside the HTML report (which has it) it does not.
        assert.include(svg, `>${outcome.title}</text>`)
        assert.notInclude(Svg.render(outcome, { heading: false }), outcome.title)
        assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/)
        assert.strictEqual(svg.match(/<polyline /g)?.length, 4 * 4)
        // The capacity dashed red, the deadline dotted dark: in the legend, and a line per row.
        assert.strictEqual(svg.match(/stroke="#d62728" stroke-width="1.5" stroke-dasharray="5 3"/g)?.length, 1 + 4)
        assert.strictEqual(svg.match(/stroke="#333333" stroke-width="1.5" stroke-dasharray="1.5 2.5"/g)?.length, 1 + 4)
        // Open episodes: a bar along the bottom of each panel (legend + 3 rows x 4 panels), never a
        // shade over the stall's.
        assert.strictEqual(svg.match(/fill="#555555" fill-opacity="0.7"/g)?.length, 1 + 3 * 4)
        // Each line swatch of the legend is 22 wide wherever it lands, on a wrapped line too (a
        // longer stall label pushes the capacity and the deadline onto the legend's second line).
        const wrapped = Svg.render({ ...outcome, marks: [{ ...outcome.marks[0]!, label: "a stall ".repeat(10) }] })
        const swatches = [
          ...wrapped.matchAll(/<line x1="(\d+(?:\.\d+)?)" y1="([\d.]+)" x2="([\d.]+)"[^>]*stroke-dasharray/g)
        ]
          .filter((m) => m[1] !== "0")
          .map((m) => [Number(m[3]) - Number(m[1]), Number(m[2])])
        assert.deepStrictEqual(
          swatches.map(([w]) => w),
          [22, 22]
        )
        assert.isAbove(swatches[0]![1]!, Number(/<text x="84" y="([\d.]+)">a stall/.exec(wrapped)?.[1]))
        // Every line of the setup is on the chart, and so is what the marks mean.
        for (const line of outcome.setup.split("\n")) assert.include(svg, `>${line.replace(/&/g, "&amp;")}</text>`)
        assert.include(svg, `</tspan> ${CacheStallIncident.criteria(config)}; <tspan`)
      }),
    // CPU-bound virtual time, twice over: ~20 s on an idle 2-core machine, more on a busy one.
    180_000
  )

  // The headline figures of docs/incident.md, with the defaults: a change that worsens a strategy
  // (more load on the database, more failed requests, a longer way back) fails here.
  it.effect(
    "pins the headline figures of the defaults",
    () =>
      Effect.gen(function* () {
        const result = yield* CacheStall.run(CacheStall.defaults)
        assert.deepStrictEqual(
          result.lanes.map((l) => [
            l.name,
            l.summary.peakQueries,
            l.summary.overCapacitySeconds,
            l.summary.failed,
            l.summary.recoverySeconds
          ]),
          [
            ["none", 9321, 1, 9006, 7],
            ["shed", 10500, 30, 24008, 62],
            ["repair", 10500, 30, 24006, 36],
            ["single-flight", 4868, 1, 8847, 36]
          ]
        )
      }),
    180_000
  )
})

describe("flags", () => {
  it("defaults to every incident, with the incident's numbers", () => {
    const command = Either.getOrThrow(Flags.parse([], incidents))
    assert.deepStrictEqual(
      command.incidents.map((i) => i.name),
      ["cache-stall", "overload", "retry-storm"]
    )
    assert.strictEqual(command.incidents[0]!.setup, CacheStallIncident.describe(CacheStall.defaults))
    assert.include(command.incidents[0]!.setup, "1,500 requests/s")
    assert.include(command.incidents[0]!.setup, "the cache stalls for 6 s at 60 s; the breaker stays open 30 s")
    assert.isFalse(command.help)
  })

  it("states what earns a cache-stall tick in whole seconds", () => {
    assert.include(CacheStallIncident.criteria(CacheStall.defaults), "at most 2 s (the stall's own burst)")
    assert.include(
      CacheStallIncident.criteria({ ...CacheStall.defaults, stallMillis: 20_000 }),
      "at most 6 s (the stall's own burst)"
    )
  })

  it("reads an incident's flags: times with units, numbers and a list of strategies", () => {
    const command = Either.getOrThrow(
      Flags.parse(
        [
          "--",
          "--incident",
          "cache-stall",
          "--rate",
          "500",
          "--stall",
          "2500ms",
          "--open-for",
          "1m",
          "--strategies",
          "shed,repair",
          "--help"
        ],
        incidents
      )
    )
    assert.strictEqual(
      command.incidents[0]!.setup,
      CacheStallIncident.describe({ ...CacheStall.defaults, rate: 500, stallMillis: 2500, openForMillis: 60_000 })
    )
    assert.isTrue(command.help)
  })

  it("says which flag is wrong and why", () => {
    const message = (argv: Array<string>) => {
      const parsed = Flags.parse(argv, incidents)
      assert.isTrue(Either.isLeft(parsed))
      return Either.isLeft(parsed) ? parsed.left.message : ""
    }
    assert.match(message(["--rate=-3"]), /^--rate: must be a number from 1 to 20000, got "-3"/)
    assert.match(message(["--stall", "soon"]), /^--stall: must be a time/)
    assert.match(message(["--strategies", "shed,magic"]), /unknown name "magic"/)
    assert.match(
      message(["--incident", "meteor"]),
      /^--incident: unknown name "meteor"; the names are cache-stall, overload, retry-storm$/
    )
    assert.match(message(["--max-loads", "1.5"]), /^--max-loads: must be a whole number/)
    assert.match(message(["--frobnicate"]), /frobnicate/)
  })

  it("--help names every incident and every flag", () => {
    const help = Flags.help(incidents)
    for (const flag of [
      "--incident",
      "--out",
      "--rate",
      "--stall",
      "--stall-at",
      "--open-for",
      "--strategies",
      "--db-capacity"
    ]) {
      assert.include(help, flag)
    }
    assert.include(help, "cache-stall")
  })

  it("each run without --out writes to a new folder; a relative --out is relative to where the command was typed", () => {
    const first = Flags.outputFolder(undefined, "/ignored")
    const second = Flags.outputFolder(undefined, "/ignored")
    try {
      assert.notStrictEqual(first, second)
      assert.isTrue(fs.statSync(first).isDirectory() && fs.statSync(second).isDirectory())
      assert.strictEqual(path.dirname(first), os.tmpdir())
    } finally {
      fs.rmSync(first, { recursive: true, force: true })
      fs.rmSync(second, { recursive: true, force: true })
    }
    assert.strictEqual(Flags.outputFolder("charts", "/home/me/app"), "/home/me/app/charts")
    assert.strictEqual(Flags.outputFolder("/srv/out", "/home/me/app"), "/srv/out")
  })
})
