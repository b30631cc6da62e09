/** Reads the pixels of a PNG (8-bit RGB or RGBA, not interlaced: what Chromium's screenshots are). */
import * as zlib from "node:zlib"

export interface Image {
  readonly width: number
  readonly height: number
  /** RGBA, row by row. */
  readonly pixels: Uint8Array
}

export const decode = (png: Buffer): Image => {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
  if (!signature.every((b, i) => png[i] === b)) throw new Error("not a PNG")
  let offset = 8
  let width = 0
  let height = 0
  let channels = 0
  const data: Array<Buffer> = []
  while (offset < png.length) {
    const length = png.readUInt32BE(offset)
    const type = png.toString("ascii", offset + 4, offset + 8)
    const body = png.subarray(offset + 8, offset + 8 + length)
    if (type === "IHDR") {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      const [depth, color, , , interlace] = [body[8], body[9], body[10], body[11], body[12]]
      if (depth !== 8 || (color !== 2 && color !== 6) || interlace !== 0) {
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${color}, interlace ${interlace}`)
      }
      channels = color === 6 ? 4 : 3
    } else if (type === "IDAT") data.push(body)
    else if (type === "IEND") break
    offset += 12 + length
  }
  const raw = zlib.inflateSync(Buffer.concat(data))
  const stride = width * channels
  const out = new Uint8Array(width * height * 4)
  let previous = new Uint8Array(stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    const row = new Uint8Array(stride)
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? row[i - channels]! : 0
      const b = previous[i]!
      const c = i >= channels ? previous[i - channels]! : 0
      const x = line[i]!
      const predicted =
        filter === 0
          ? 0
          : filter === 1
            ? a
            : filter === 2
              ? b
              : filter === 3
                ? (a + b) >> 1
                : (() => {
                    const p = a + b - c
                    const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)]
                    return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
                  })()
      row[i] = (x + predicted) & 0xff
    }
    for (let px = 0; px < width; px++) {
      for (let ch = 0; ch < 4; ch++) {
        out[(y * width + px) * 4 + ch] = ch < channels ? row[px * channels + ch]! : 255
      }
    }
    previous = row
  }
  return { width, height, pixels: out }
}
