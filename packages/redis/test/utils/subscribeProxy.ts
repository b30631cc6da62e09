import { Effect } from "effect"
import type { Scope } from "effect"
import * as net from "node:net"

/**
 * A TCP proxy in front of a redis-server that can cut its subscriber connections and hold back
 * every SUBSCRIBE it is sent: while `holdSubscribes` is on, the first chunk of a connection that
 * carries a SUBSCRIBE, and every later chunk of that connection (so the order is kept), waits
 * until `release`. The server then takes the subscription late, as a loaded server or network may.
 */
export const subscribeHoldingProxy = (target: number): Effect.Effect<SubscribeHoldingProxy, never, Scope.Scope> =>
  Effect.gen(function* () {
    const sockets = new Set<net.Socket>()
    const held: Array<() => void> = []
    /** The connections whose chunks wait, from their first SUBSCRIBE until `release`. */
    const blocked = new Set<net.Socket>()
    /** The connections that sent a SUBSCRIBE. */
    const subscribers = new Set<net.Socket>()
    let holding = false
    let heldSubscribes = 0
    const server = net.createServer((client) => {
      const upstream = net.connect(target, "127.0.0.1")
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on("error", () => {})
        socket.on("close", () => {
          sockets.delete(socket)
          subscribers.delete(socket)
          blocked.delete(socket)
          client.destroy()
          upstream.destroy()
        })
      }
      client.on("data", (chunk: Buffer) => {
        const subscribe = chunk.toString("latin1").toLowerCase().includes("subscribe")
        if (subscribe) subscribers.add(client)
        if (!blocked.has(client) && holding && subscribe) {
          blocked.add(client)
          heldSubscribes++
        }
        if (blocked.has(client)) held.push(() => upstream.write(chunk))
        else upstream.write(chunk)
      })
      upstream.pipe(client)
    })
    const port = yield* Effect.acquireRelease(
      Effect.async<number>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed((server.address() as net.AddressInfo).port)))
      }),
      () =>
        Effect.async<void>((resume) => {
          for (const socket of sockets) socket.destroy()
          server.close(() => resume(Effect.void))
        })
    )
    return {
      url: `redis://127.0.0.1:${port}`,
      holdSubscribes: Effect.sync(() => {
        holding = true
      }),
      heldSubscribes: Effect.sync(() => heldSubscribes),
      cutSubscribers: Effect.sync(() => {
        for (const socket of subscribers) socket.destroy()
      }),
      release: Effect.sync(() => {
        holding = false
        blocked.clear()
        for (const write of held.splice(0)) write()
      })
    }
  })

/** @see subscribeHoldingProxy */
export interface SubscribeHoldingProxy {
  readonly url: string
  readonly holdSubscribes: Effect.Effect<void>
  readonly heldSubscribes: Effect.Effect<number>
  readonly cutSubscribers: Effect.Effect<void>
  readonly release: Effect.Effect<void>
}
