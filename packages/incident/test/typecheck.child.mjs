// The docs test's typecheck, in a process of its own: one `ts.createProgram` over every block takes
// minutes on a busy machine, and in the test's worker it would block the event loop that answers
// vitest (its RPC gives up after 60 s: "Timeout calling onTaskUpdate", which fails the run).
// Reads [{ files, options }] as JSON on stdin; writes each program's diagnostics as JSON on stdout.
import ts from "typescript"

let input = ""
for await (const chunk of process.stdin) input += chunk
const programs = JSON.parse(input)
const diagnostics = programs.flatMap(({ files, options }) =>
  ts.getPreEmitDiagnostics(ts.createProgram(files, options)).flatMap((diagnostic) => {
    if (diagnostic.file === undefined) return []
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0)
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n")
    return [{ file: diagnostic.file.fileName, line, code: diagnostic.code, message }]
  })
)
process.stdout.write(JSON.stringify(diagnostics))
