/** Running a command as a plain shell would, for the consumer tests (every edition's). */
import { execFile } from "node:child_process"
import { promisify } from "node:util"

const exec = promisify(execFile)

/** The environment of a plain shell: nothing pnpm, vitest or the workspace put there. */
export const env = Object.fromEntries(
  Object.entries(process.env).filter(([key]) => !/^(npm_|pnpm_|NODE_OPTIONS$|NODE_PATH$|VITEST)/i.test(key))
)
export const run = async (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMinutes = 5) => {
  try {
    return await exec(command, args, { cwd, env, timeout: timeoutMinutes * 60_000, maxBuffer: 64 << 20 })
  } catch (error) {
    const e = error as { message: string; killed?: boolean; signal?: string; stdout?: string; stderr?: string }
    // execFile kills a command at its timeout and says only "Command failed".
    const why = e.killed === true ? `killed (${e.signal}) at this test's limit of ${timeoutMinutes} minutes` : e.message
    throw new Error(`${command} ${args.join(" ")} (in ${cwd}) failed: ${why}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`)
  }
}
