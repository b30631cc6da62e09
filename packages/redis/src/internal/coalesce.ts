import type { Socket } from "node:net"

/**
 * Coalesces the commands sent on one client in one turn of the event loop into one socket write.
 *
 * ioredis writes each command to its socket at once: with many calls in flight that is one
 * system call (and one wake-up of the server) per command, which costs more CPU than the rest of
 * the call. Corking the socket until the end of the current tick lets Node send them in one
 * `writev`. The order of the bytes on the connection, and so the matching of replies to commands,
 * is unchanged; a command sent alone waits only for the end of the current tick (no timer).
 *
 * Returns the function to call before each command is sent.
 *
 * @internal
 */
export const writeCoalescer = (client: object): (() => void) => {
  let corked: Socket | undefined
  const uncork = () => {
    const stream = corked
    corked = undefined
    stream?.uncork()
  }
  return () => {
    if (corked !== undefined) return
    // Read each time: a reconnect replaces the socket (a TLS socket is a Socket too; a cluster
    // client has none of its own, and its writes go out as they come).
    const stream = (client as { readonly stream?: Socket | undefined }).stream
    if (stream === undefined || typeof stream.cork !== "function") return
    stream.cork()
    corked = stream
    process.nextTick(uncork)
  }
}
