import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as CacheStall from "../src/cacheStall/CacheStall.js"
import * as CacheStallIncident from "../src/cacheStall/incident.js"
import * as Html from "../src/Html.js"
import * as Overload from "../src/overload/Overload.js"
import * as OverloadIncident from "../src/overload/incident.js"
import * as RetryStorm from "../src/retryStorm/RetryStorm.js"
import * as RetryStormIncident from "../src/retryStorm/incident.js"
import { decode } from "./png.js"
import { small } from "./small.js"

/** Runs the Debian `chromium` headless (CHROMIUM overrides the binary), with a fresh profile. */
const chromium = (args: ReadonlyArray<string>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "circuitry-chromium-"))),
    (profile) =>
      Effect.async<string, Error>((resume) => {
        execFile(
          process.env.CHROMIUM ?? "chromium",
          [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--disable-component-update",
            "--disable-sync",
            `--user-data-dir=${profile}`,
            ...args
          ],
          { timeout: 60_000 },
          (error, stdout, stderr) =>
            resume(
              error === null
                ? Effect.succeed(stdout)
                : Effect.fail(new Error(`chromium failed: ${error.message}\n${stderr.slice(-2000)}`))
            )
        )
      }),
    (profile) => Effect.sync(() => fs.rmSync(profile, { recursive: true, force: true }))
  )

const hex = (color: string) => [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16))

/** Renders the page in Chromium; counts the pixels of a colour (exact or within a little). */
const screenshot = (html: string, name: string, height: number) =>
  Effect.gen(function* () {
    const dir = fileURLToPath(new URL("../.tmp/", import.meta.url))
    fs.mkdirSync(dir, { recursive: true })
    const page = path.join(dir, `${name}.html`)
    const shot = path.join(dir, `${name}.png`)
    fs.writeFileSync(page, html)
    fs.rmSync(shot, { force: true })
    yield* chromium([`--screenshot=${shot}`, `--window-size=1200,${height}`, "--hide-scrollbars", `file://${page}`])
    const image = decode(fs.readFileSync(shot))
    assert.deepStrictEqual([image.width, image.height], [1200, height])
    const count = (rgb: ReadonlyArray<number>, tolerance: number) => {
      let n = 0
      for (let i = 0; i < image.pixels.length; i += 4) {
        if (rgb.every((v, ch) => Math.abs(image.pixels[i + ch]! - v) <= tolerance)) n++
      }
      return n
    }
    return { count, image }
  })

describe("the HTML report", () => {
  it.effect(
    "renders in headless Chromium: the charts are drawn (lines, capacity, shading), not a blank page",
    () =>
      Effect.gen(function* () {
        const result = yield* CacheStall.run({ ...small, maxConcurrentLoads: CacheStall.defaults.maxConcurrentLoads })
        const html = Html.render([CacheStallIncident.outcome(result)], { intervalSeconds: 10 })
        const { count, image } = yield* screenshot(html, "report", 1000)
        const total = image.width * image.height
        const white = count([255, 255, 255], 0)
        // Text, panels and lines cover a good part of the page; a blank page is all white.
        assert.isBelow(white / total, 0.9, "the page is (nearly) blank")
        assert.isAbove(white / total, 0.3, "the page is not a page")
        // The database line (blue), the failed-requests line and the capacity (red), the misses line
        // (purple) are drawn; so are the stall's shade (light orange) and the open circuit's bar (grey).
        assert.isAbove(count(hex("#1f77b4"), 24), 300, "no database-queries line")
        assert.isAbove(count(hex("#d62728"), 24), 300, "no failed-requests line or capacity")
        assert.isAbove(count(hex("#6a3d9a"), 24), 300, "no cache-misses line")
        // 22% orange over the panel's #fafafa, rgb(251, 223, 194); the open circuit a bar of 70%
        // #555555 over it, rgb(135, 135, 135).
        assert.isAbove(count([251, 223, 194], 6), 500, "no stall shading")
        assert.isAbove(count([135, 135, 135], 6), 2000, "no open-episode bar")
      }),
    120_000
  )

  it.effect(
    "renders the overload and the retry storm: every strategy's lines and the shaded fault",
    () =>
      Effect.gen(function* () {
        const overload = yield* Overload.run({ ...Overload.defaults, strategies: ["no-limit", "aimd"] })
        const storm = yield* RetryStorm.run({ ...RetryStorm.defaults, strategies: ["plain", "budget+breaker"] })
        const html = Html.render([OverloadIncident.outcome(overload), RetryStormIncident.outcome(storm)], {
          intervalSeconds: 10
        })
        const { count, image } = yield* screenshot(html, "report-2-3", 2400)
        const white = count([255, 255, 255], 0) / (image.width * image.height)
        assert.isBelow(white, 0.92, "the page is (nearly) blank")
        // Goodput and attempts (purple), p99 and failed (blue), timeouts and the capacities (red),
        // rejections (green, the overload's fourth column); the fault windows shaded orange.
        assert.isAbove(count(hex("#6a3d9a"), 24), 300, "no goodput or attempts line")
        assert.isAbove(count(hex("#1f77b4"), 24), 300, "no p99 or failed-requests line")
        assert.isAbove(count(hex("#d62728"), 24), 300, "no timeouts line or dashed lines")
        assert.isAbove(count(hex("#2ca02c"), 24), 300, "no rejections line")
        assert.isAbove(count([251, 223, 194], 6), 2000, "no shaded fault window")
      }),
    120_000
  )
})
