/**
 * The state machine, driven directly (it is given `now` and holds no Effect services): the cases
 * the model test rarely reaches, each pinned by name. Found by mutation testing (see MUTANTS.md).
 */
import { assert, describe, it } from "@circuitry/testkit"
import * as Machine from "../src/internal/machine.js"
import * as Tracker from "../src/internal/tracker.js"

interface Heard {
  readonly transition: string
  readonly until: number
  readonly remote: boolean
}

const make = (options?: {
  readonly threshold?: number
  readonly successesToClose?: number
  readonly wait?: number
}) => {
  const heard: Array<Heard> = []
  const transitions: Array<Machine.Transition> = []
  let resets = 0
  const machine = new Machine.Machine({
    tracker: new Tracker.ConsecutiveFailures(options?.threshold ?? 1),
    successesToClose: options?.successesToClose ?? 1,
    delays: {
      next: () => options?.wait ?? 1_000,
      last: () => options?.wait ?? 1_000,
      reset: () => {
        resets++
      }
    },
    listener: {
      onTransition: (t, until, remote) => {
        transitions.push(t)
        heard.push({ transition: `${t.from}->${t.to}@${t.at}`, until, remote })
      }
    }
  })
  const trip = (now: number) => {
    assert.strictEqual(machine.record(machine.generation, true, now, 0), Machine.TRIPS)
    machine.trip(now)
  }
  return { machine, heard, transitions, trip, resets: () => resets }
}

describe("Machine", () => {
  it("record says what it did: counted, trips, or stale (an earlier window, or not Closed)", () => {
    const { machine } = make({ threshold: 2 })
    const generation = machine.generation
    assert.strictEqual(machine.record(generation, true, 0, 0), Machine.COUNTED)
    assert.strictEqual(machine.record(generation, true, 0, 0), Machine.TRIPS)
    assert.strictEqual(machine.tag, "Closed") // record does not open: trip does
    machine.reset(0)
    assert.strictEqual(machine.record(generation, true, 0, 0), Machine.STALE)
    assert.strictEqual(machine.record(machine.generation, true, 0, 0), Machine.COUNTED)
    machine.trip(0)
    assert.strictEqual(machine.record(machine.generation, true, 0, 0), Machine.STALE) // Open
  })

  it("a trip opens for the next delay and announces until; HalfOpen comes lazily at until", () => {
    const { heard, machine, trip } = make({ wait: 500 })
    trip(100)
    assert.deepStrictEqual(heard, [{ transition: "Closed->Open@100", until: 600, remote: false }])
    assert.strictEqual(machine.retryAfter(350), 250)
    machine.sync(599)
    assert.strictEqual(machine.tag, "Open")
    machine.sync(600)
    assert.strictEqual(machine.tag, "HalfOpen")
    assert.strictEqual(machine.retryAfter(700), 0)
    assert.deepStrictEqual(heard[1], { transition: "Open->HalfOpen@600", until: 0, remote: false })
  })

  it("admit: Closed runs, HalfOpen probes, Open rejects plain calls and admits a repair, Isolated rejects all", () => {
    const { machine, trip } = make()
    assert.strictEqual(machine.admit(0, false), Machine.RUN)
    trip(0)
    assert.strictEqual(machine.admit(0, false), Machine.REJECT)
    assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
    assert.strictEqual(machine.admit(1_000, false), Machine.PROBE)
    machine.isolate(1_000)
    assert.strictEqual(machine.admit(1_000, true), Machine.REJECT)
    assert.isFalse(machine.wouldAdmit(1_000, true))
  })

  describe("repairs", () => {
    it("one at a time until one succeeds; then side by side", () => {
      const { machine, trip } = make()
      trip(0)
      const g = machine.generation
      assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
      assert.strictEqual(machine.admit(0, true), Machine.REJECT)
      machine.endRepair(g, Machine.SUCCESS)
      assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
      assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
    })

    it("an interrupted repair gives its slot back and proves nothing", () => {
      const { machine, trip } = make()
      trip(0)
      const g = machine.generation
      assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
      machine.endRepair(g, Machine.INTERRUPTED)
      // Not blocking the episode: the next repair runs ...
      assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
      // ... and not a proof: it still runs alone.
      assert.strictEqual(machine.admit(0, true), Machine.REJECT)
      assert.isFalse(machine.repairProven)
      assert.isFalse(machine.repairFailed)
    })

    it("a failed repair rejects repair traffic for the rest of the episode", () => {
      const { machine, trip } = make()
      trip(0)
      const g = machine.generation
      assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
      machine.endRepair(g, Machine.FAILURE)
      assert.isTrue(machine.repairFailed)
      assert.isFalse(machine.wouldAdmit(0, true))
      // Even after a proof: a failure after it still stops the episode.
      const other = make()
      other.trip(0)
      const g2 = other.machine.generation
      other.machine.admit(0, true)
      other.machine.endRepair(g2, Machine.SUCCESS)
      other.machine.admit(0, true)
      other.machine.endRepair(g2, Machine.FAILURE)
      assert.isFalse(other.machine.wouldAdmit(0, true))
    })

    it("the outcome of a repair from an earlier episode is not heard", () => {
      const { machine, trip } = make()
      trip(0)
      const first = machine.generation
      assert.strictEqual(machine.admit(0, true), Machine.REPAIR)
      machine.sync(1_000) // HalfOpen
      machine.endProbe(machine.generation, Machine.FAILURE, 1_000)
      assert.strictEqual(machine.tag, "Open") // a new episode
      assert.strictEqual(machine.repairs, 0)
      machine.endRepair(first, Machine.FAILURE)
      assert.isFalse(machine.repairFailed)
      assert.strictEqual(machine.repairs, 0)
      assert.strictEqual(machine.admit(1_000, true), Machine.REPAIR)
    })
  })

  describe("probes", () => {
    it("successesToClose successes close; a failure reopens; an interruption is nothing", () => {
      const { heard, machine, trip } = make({ successesToClose: 2 })
      trip(0)
      machine.sync(1_000)
      const g = machine.generation
      machine.endProbe(g, Machine.INTERRUPTED, 1_000)
      machine.endProbe(g, Machine.SUCCESS, 1_000)
      assert.strictEqual(machine.tag, "HalfOpen")
      assert.strictEqual(machine.probeSuccesses, 1)
      machine.endProbe(g, Machine.SUCCESS, 1_000)
      assert.strictEqual(machine.tag, "Closed")
      assert.deepStrictEqual(heard[2], { transition: "HalfOpen->Closed@1000", until: 0, remote: false })
    })

    it("a probe's outcome from an earlier half-open episode is not heard", () => {
      const { machine, trip } = make({ successesToClose: 1 })
      trip(0)
      machine.sync(1_000)
      const early = machine.generation
      machine.endProbe(early, Machine.FAILURE, 1_000) // reopens until 2000
      machine.sync(2_000)
      machine.endProbe(early, Machine.SUCCESS, 2_000)
      assert.strictEqual(machine.tag, "HalfOpen")
      machine.endProbe(early, Machine.FAILURE, 2_000)
      assert.strictEqual(machine.tag, "HalfOpen")
    })

    it("every transition starts the count of successful probes again", () => {
      const { machine, trip } = make({ successesToClose: 2 })
      trip(0)
      machine.sync(1_000)
      machine.endProbe(machine.generation, Machine.SUCCESS, 1_000)
      machine.isolate(1_000)
      assert.strictEqual(machine.probeSuccesses, 0)
    })
  })

  describe("manual control", () => {
    it("extendOpen lengthens an open episode only, never shortens it", () => {
      const { machine, trip } = make({ wait: 1_000 })
      assert.isFalse(machine.extendOpen(5_000, 0))
      trip(0)
      assert.isFalse(machine.extendOpen(1_000, 0)) // not longer
      assert.isTrue(machine.extendOpen(5_000, 0))
      assert.strictEqual(machine.until, 5_000)
      assert.isFalse(machine.extendOpen(6_000, 5_000)) // HalfOpen by then
    })

    it("reset closes (announced only when not Closed), restarts the schedule and the window", () => {
      const { heard, machine, resets, trip } = make({ threshold: 2 })
      machine.record(machine.generation, true, 0, 0)
      machine.reset(0)
      assert.deepStrictEqual(heard, [])
      assert.strictEqual(resets(), 1)
      assert.deepStrictEqual(machine.config.tracker.counts(0).calls, 0)
      machine.record(machine.generation, true, 0, 0)
      trip(0)
      machine.reset(10)
      assert.deepStrictEqual(heard.at(-1), { transition: "Open->Closed@10", until: 0, remote: false })
      assert.strictEqual(machine.lastTransitionAt, 10)
    })

    it("isolate is announced once, as this instance's own", () => {
      const { heard, machine } = make()
      machine.isolate(0)
      machine.isolate(5)
      assert.deepStrictEqual(heard, [{ transition: "Closed->Isolated@0", until: 0, remote: false }])
    })

    it("reconfigure: later events use the new parts; the state and its episode stay", () => {
      const { heard, machine, trip } = make({ threshold: 1, successesToClose: 1, wait: 1_000 })
      trip(0)
      machine.reconfigure({ ...machine.config, tracker: new Tracker.ConsecutiveFailures(2), successesToClose: 2 })
      assert.strictEqual(machine.tag, "Open")
      assert.strictEqual(machine.until, 1_000)
      machine.sync(1_000)
      machine.endProbe(machine.generation, Machine.SUCCESS, 1_000)
      assert.strictEqual(machine.tag, "HalfOpen") // two successes close now, not one
      machine.endProbe(machine.generation, Machine.SUCCESS, 1_000)
      assert.strictEqual(machine.tag, "Closed")
      assert.strictEqual(machine.record(machine.generation, true, 1_000, 0), Machine.COUNTED) // two failures trip now
      assert.strictEqual(machine.record(machine.generation, true, 1_000, 0), Machine.TRIPS)
      assert.strictEqual(heard.length, 3)
    })

    it("generations only grow: a call from an old window never becomes current again", () => {
      const { machine } = make()
      const old = machine.generation
      machine.isolate(0)
      for (let i = 0; i < 5; i++) {
        machine.reset(0) // the first reset is a transition; the rest start a new window without one
        assert.strictEqual(machine.record(old, true, 0, 0), Machine.STALE)
        assert.isAbove(machine.generation, old)
      }
    })
  })

  describe("adopting remote verdicts", () => {
    it("Closed closes (remotely), unless already Closed", () => {
      const { heard, machine, trip } = make()
      machine.adopt("Closed", 0, 0, 0)
      assert.deepStrictEqual(heard, [])
      trip(0)
      machine.adopt("Closed", 0, 5, 5)
      assert.strictEqual(machine.tag, "Closed")
      assert.deepStrictEqual(heard.at(-1), { transition: "Open->Closed@5", until: 0, remote: true })
    })

    it("Closed while Closed keeps the window (and the calls in flight) as they are", () => {
      const { heard, machine } = make({ threshold: 2 })
      const generation = machine.generation
      assert.strictEqual(machine.record(generation, true, 0, 0), Machine.COUNTED)
      machine.adopt("Closed", 0, 5, 5)
      assert.strictEqual(machine.generation, generation)
      assert.strictEqual(machine.record(generation, true, 5, 0), Machine.TRIPS)
      assert.deepStrictEqual(heard, [])
    })

    it("Isolated isolates (remotely), once", () => {
      const { heard, machine } = make()
      machine.adopt("Isolated", 0, 1, 1)
      machine.adopt("Isolated", 0, 2, 2)
      assert.strictEqual(machine.tag, "Isolated")
      assert.deepStrictEqual(heard, [{ transition: "Closed->Isolated@1", until: 0, remote: true }])
    })

    it("Open while Open keeps the later until, and announces nothing", () => {
      const { heard, machine, trip } = make({ wait: 1_000 })
      trip(0)
      machine.adopt("Open", 5_000, 10, 10)
      assert.strictEqual(machine.until, 5_000)
      machine.adopt("Open", 2_000, 20, 20)
      assert.strictEqual(machine.until, 5_000)
      assert.strictEqual(heard.length, 1)
    })

    it("Open while Closed opens until the verdict's until", () => {
      const { heard, machine } = make()
      machine.adopt("Open", 3_000, 100, 100)
      assert.strictEqual(machine.tag, "Open")
      assert.strictEqual(machine.until, 3_000)
      assert.deepStrictEqual(heard, [{ transition: "Closed->Open@100", until: 3_000, remote: true }])
    })

    it("an Open whose episode is over joins the fleet's probe as HalfOpen, through Open", () => {
      const { heard, machine } = make()
      machine.adopt("Open", 1_000, 0, 2_000)
      assert.strictEqual(machine.tag, "HalfOpen")
      assert.deepStrictEqual(
        heard.map((h) => [h.transition, h.remote]),
        [
          ["Closed->Open@2000", true],
          ["Open->HalfOpen@2000", false]
        ]
      )
    })

    it("HalfOpen re-opens for a verdict still open; an expired one leaves it probing", () => {
      const { machine, trip } = make({ wait: 1_000 })
      trip(0)
      machine.sync(1_000)
      const episode = machine.generation
      machine.adopt("Open", 1_000, 1_000, 1_000) // until == now: over, so nothing happens
      assert.strictEqual(machine.tag, "HalfOpen")
      assert.strictEqual(machine.generation, episode)
      machine.adopt("Open", 4_000, 1_000, 1_000)
      assert.strictEqual(machine.tag, "Open")
      assert.strictEqual(machine.until, 4_000)
    })

    it("Open is not adopted by an Isolated circuit", () => {
      const { machine } = make()
      machine.isolate(0)
      machine.adopt("Open", 5_000, 1, 1)
      assert.strictEqual(machine.tag, "Isolated")
    })

    it("a verdict made before the last transition is out of date; one made at the same time is not", () => {
      const { machine, trip } = make()
      trip(100)
      machine.adopt("Closed", 0, 99, 150)
      assert.strictEqual(machine.tag, "Open")
      machine.adopt("Closed", 0, 100, 150)
      assert.strictEqual(machine.tag, "Closed")
    })
  })

  describe("who did it", () => {
    it("an operator's isolate and reset name who asked; the policy's transitions name no one", () => {
      const { machine, transitions, trip } = make()
      trip(0)
      machine.isolate(1, "alice")
      machine.reset(2, "bob")
      machine.isolate(3)
      machine.reset(4)
      assert.deepStrictEqual(transitions, [
        { from: "Closed", to: "Open", at: 0 },
        { from: "Open", to: "Isolated", at: 1, by: "alice" },
        { from: "Isolated", to: "Closed", at: 2, by: "bob" },
        { from: "Closed", to: "Isolated", at: 3 },
        { from: "Isolated", to: "Closed", at: 4 }
      ])
    })

    it("an adopted verdict names the member that made it and who asked, on each transition it causes", () => {
      const { machine, transitions } = make()
      machine.adopt("Open", 1_000, 0, 0, { origin: "m#1" })
      machine.adopt("Isolated", 0, 10, 10, { origin: "m#2", by: "carol" })
      machine.adopt("Closed", 0, 20, 20, { origin: "m#2", by: "carol" })
      // an Open verdict whose time is over joins the probe: Open (adopted), then HalfOpen (this machine's)
      machine.adopt("Open", 25, 30, 30, { origin: "m#3" })
      assert.deepStrictEqual(transitions, [
        { from: "Closed", to: "Open", at: 0, origin: "m#1" },
        { from: "Open", to: "Isolated", at: 10, origin: "m#2", by: "carol" },
        { from: "Isolated", to: "Closed", at: 20, origin: "m#2", by: "carol" },
        { from: "Closed", to: "Open", at: 30, origin: "m#3" },
        { from: "Open", to: "HalfOpen", at: 30 }
      ])
    })

    it("before its first transition a machine takes a verdict made at any time, even before 0", () => {
      const { machine } = make()
      machine.adopt("Open", 5_000, -20, 0)
      assert.strictEqual(machine.tag, "Open")
    })
  })
})

describe("Machine with an OpenGate (a registry's maxOpen)", () => {
  const gated = (allow: () => boolean, threshold = 2) => {
    const m = make({ threshold })
    const asked: Array<boolean> = []
    const moved: Array<string> = []
    m.machine.gate = {
      mayOpen: (_now, again) => {
        asked.push(again)
        return allow()
      },
      moved: (from, to) => moved.push(`${from}->${to}`)
    }
    return { ...m, asked, moved }
  }

  it("a refused trip keeps the circuit closed and capped; the gate hears `again` while the policy still trips", () => {
    let allow = false
    const { asked, heard, machine, moved } = gated(() => allow)
    assert.strictEqual(machine.record(machine.generation, true, 0, 0), Machine.COUNTED) // 1 of 2: not asked
    assert.deepStrictEqual(asked, [])
    assert.strictEqual(machine.record(machine.generation, true, 1, 0), Machine.COUNTED)
    assert.strictEqual(machine.tag, "Closed")
    assert.isTrue(machine.capped)
    assert.strictEqual(machine.record(machine.generation, true, 2, 0), Machine.COUNTED)
    assert.deepStrictEqual(asked, [false, true])
    allow = true
    assert.strictEqual(machine.record(machine.generation, true, 3, 0), Machine.TRIPS)
    assert.deepStrictEqual(asked, [false, true, true])
    machine.trip(3)
    assert.isFalse(machine.capped)
    assert.deepStrictEqual(moved, ["Closed->Open"])
    assert.deepStrictEqual(
      heard.map((h) => h.transition),
      ["Closed->Open@3"]
    )
  })

  it("a first call that trips and is refused starts a spell: no spell comes before it", () => {
    const { asked, machine } = gated(() => false, 1)
    assert.strictEqual(machine.record(machine.generation, true, 0, 0), Machine.COUNTED)
    assert.strictEqual(machine.record(machine.generation, true, 1, 0), Machine.COUNTED)
    assert.deepStrictEqual(asked, [false, true])
  })

  it("a call that does not trip ends the spell: the next refusal is a new one", () => {
    const { asked, machine } = gated(() => false)
    machine.record(machine.generation, true, 0, 0)
    machine.record(machine.generation, true, 0, 0)
    assert.isTrue(machine.capped)
    assert.strictEqual(machine.record(machine.generation, false, 0, 0), Machine.COUNTED)
    assert.isFalse(machine.capped)
    machine.record(machine.generation, true, 0, 0)
    machine.record(machine.generation, true, 0, 0)
    assert.deepStrictEqual(asked, [false, false])
  })

  it("a reset or an isolation ends the spell; the gate hears every transition, adopted ones too", () => {
    const { machine, moved } = gated(() => false)
    machine.record(machine.generation, true, 0, 0)
    machine.record(machine.generation, true, 0, 0)
    machine.reset(1) // Closed -> Closed: nothing announced, the spell ends
    assert.isFalse(machine.capped)
    machine.record(machine.generation, true, 2, 0)
    machine.record(machine.generation, true, 2, 0)
    assert.isTrue(machine.capped)
    machine.isolate(3)
    assert.isFalse(machine.capped)
    machine.reset(4)
    machine.adopt("Open", 10, 5, 5)
    machine.sync(10)
    assert.deepStrictEqual(moved, ["Closed->Isolated", "Isolated->Closed", "Closed->Open", "Open->HalfOpen"])
  })

  it("a stale outcome asks nothing", () => {
    const { asked, machine } = gated(() => false)
    const generation = machine.generation
    machine.isolate(0)
    assert.strictEqual(machine.record(generation, true, 0, 0), Machine.STALE)
    assert.deepStrictEqual(asked, [])
  })
})
