/**
 * The one TCP proxy of the tests (Redis and PostgreSQL alike): a path to a local server on
 * 127.0.0.1 that a test can cut, blackhole, or slow down one connection at a time, to fault a
 * dependency for real without touching the server itself. Imported by relative path from each
 * package's tests (`../../../test-support/proxy.js`); it is no package of its own.
 */
import { Effect, type Scope } from "effect"
import * as net from "node:net"

export interface TcpProxyOptions {
  /**
   * Marks the connections to act on: a connection whose client sends a chunk this matches is
   * marked, for `hold` and `cutMarked`. Default: no chunk matches.
   */
  readonly marks?: (chunk: Buffer) => boolean
}

/** A TCP proxy on a free port of 127.0.0.1 in front of a local server. Closed with the scope. */
export interface TcpProxy {
  readonly port: number
  /** The path is gone: open connections are reset and new ones refused. */
  readonly cut: Effect.Effect<void>
  /** The path is back, on the same port. */
  readonly restore: Effect.Effect<void>
  /**
   * The path turns into a blackhole for good: connections (open and new) are accepted and every
   * byte either way is read and dropped, so nothing is ever answered and nothing is reset.
   */
  readonly blackhole: Effect.Effect<void>
  /**
   * From now until `release`, the first marked chunk of a connection and every later chunk its
   * client sends (so the order is kept) wait: the server takes them late, as a loaded server or
   * network may.
   */
  readonly hold: Effect.Effect<void>
  /** How many connections have had chunks held since the proxy started. */
  readonly held: Effect.Effect<number>
  /** Sends every held chunk on, in order, and stops holding. */
  readonly release: Effect.Effect<void>
  /** Resets every open connection that was marked; the others and new ones go on. */
  readonly cutMarked: Effect.Effect<void>
}

export const tcpProxy = (target: number, options: TcpProxyOptions = {}): Effect.Effect<TcpProxy, never, Scope.Scope> =>
  Effect.gen(function* () {
    const marks = options.marks ?? (() => false)
    const sockets = new Set<net.Socket>()
    /** Client connections that sent a marked chunk. */
    const marked = new Set<net.Socket>()
    /** Client connections whose chunks wait, from their first marked chunk until `release`. */
    const blocked = new Set<net.Socket>()
    const waiting: Array<() => void> = []
    let holding = false
    let heldConnections = 0
    let blackholed = false

    const track = (socket: net.Socket, onClose: () => void) => {
      sockets.add(socket)
      socket.on("error", () => {})
      socket.on("close", () => {
        sockets.delete(socket)
        onClose()
      })
    }

    const server = net.createServer((client) => {
      if (blackholed) {
        track(client, () => {})
        client.resume() // read and drop
        return
      }
      const upstream = net.connect(target, "127.0.0.1")
      const close = () => {
        marked.delete(client)
        blocked.delete(client)
        client.destroy()
        upstream.destroy()
      }
      track(client, close)
      track(upstream, close)
      client.on("data", (chunk: Buffer) => {
        if (blackholed) return
        const mark = marks(chunk)
        if (mark) marked.add(client)
        if (mark && holding && !blocked.has(client)) {
          blocked.add(client)
          heldConnections++
        }
        if (blocked.has(client)) waiting.push(() => upstream.write(chunk))
        else upstream.write(chunk)
      })
      upstream.on("data", (chunk: Buffer) => {
        if (!blackholed) client.write(chunk)
      })
    })

    // Promises rather than Effect.async (Effect.callback on Effect 4): the same on both majors.
    const listen = (port: number) =>
      Effect.promise(
        () =>
          new Promise<number>((resolve) => {
            server.listen(port, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port))
          })
      )
    const close = Effect.promise(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy()
          if (!server.listening) return resolve()
          server.close(() => resolve())
        })
    )
    const port = yield* Effect.acquireRelease(listen(0), () => close)

    return {
      port,
      cut: close,
      restore: Effect.asVoid(listen(port)),
      blackhole: Effect.sync(() => {
        blackholed = true
        waiting.length = 0
      }),
      hold: Effect.sync(() => {
        holding = true
      }),
      held: Effect.sync(() => heldConnections),
      release: Effect.sync(() => {
        holding = false
        blocked.clear()
        for (const write of waiting.splice(0)) write()
      }),
      cutMarked: Effect.sync(() => {
        for (const socket of marked) socket.destroy()
      })
    } satisfies TcpProxy
  })
