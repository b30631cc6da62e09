import { Effect } from "effect"
import * as net from "node:net"

/** A TCP proxy the test can cut and restore. */
export interface Proxy {
  readonly port: number
  readonly url: string
  /** The path is gone: open connections are reset and new ones refused. */
  readonly cut: Effect.Effect<void>
  /** The path is back, on the same port. */
  readonly restore: Effect.Effect<void>
}

/**
 * A TCP proxy on a free port in front of `target` (a local port), for one member's path to Redis:
 * cutting it partitions that member alone. Closed with the scope.
 */
export const proxy = (target: number) =>
  Effect.gen(function* () {
    const sockets = new Set<net.Socket>()
    const server = net.createServer((client) => {
      const upstream = net.connect(target, "127.0.0.1")
      for (const s of [client, upstream]) {
        sockets.add(s)
        s.on("error", () => {})
        s.on("close", () => {
          sockets.delete(s)
          client.destroy()
          upstream.destroy()
        })
      }
      client.pipe(upstream)
      upstream.pipe(client)
    })
    const listen = (port: number) =>
      Effect.async<number>((resume) => {
        server.listen(port, "127.0.0.1", () => resume(Effect.succeed((server.address() as net.AddressInfo).port)))
      })
    const close = Effect.async<void>((resume) => {
      for (const s of sockets) s.destroy()
      if (!server.listening) return resume(Effect.void)
      server.close(() => resume(Effect.void))
    })
    const port = yield* Effect.acquireRelease(listen(0), () => close)
    return { port, url: `redis://127.0.0.1:${port}`, cut: close, restore: Effect.asVoid(listen(port)) } satisfies Proxy
  })
