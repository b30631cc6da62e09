/** Shows an input in an options message: numbers as they are, everything else as JSON (or its type). */
export const show = (input: unknown): string => {
  if (typeof input === "number" || typeof input === "bigint") return String(input)
  if (typeof input === "function") return "a function"
  try {
    return JSON.stringify(input) ?? String(input)
  } catch {
    return typeof input
  }
}
