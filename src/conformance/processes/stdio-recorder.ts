// node stdio-recorder.ts <log> <command> [args...]: runs the command with its stdin and stdout
// passed through, and appends every line each way to <log> as {"dir": "in"|"out", "line": ...}.
// A live test puts it in front of the MCP server to read the handshake off the wire.
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";

export type RecordedLine = { dir: "in" | "out"; line: string };

/** Reads a recorder's log back. */
export function parseRecording(text: string): RecordedLine[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RecordedLine);
}

function tee(dir: RecordedLine["dir"], log: string): (chunk: Buffer) => void {
  let partial = "";
  return (chunk) => {
    partial += chunk.toString("utf8");
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) appendFileSync(log, JSON.stringify({ dir, line }) + "\n");
  };
}

if (import.meta.main) {
  const [log, command, ...args] = process.argv.slice(2);
  if (log === undefined || command === undefined) {
    process.stderr.write("usage: stdio-recorder.ts <log> <command> [args...]\n");
    process.exit(2);
  }
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
  const logIn = tee("in", log);
  const logOut = tee("out", log);
  process.stdin.on("data", (c: Buffer) => {
    logIn(c);
    child.stdin.write(c);
  });
  process.stdin.on("end", () => child.stdin.end());
  child.stdout.on("data", (c: Buffer) => {
    logOut(c);
    process.stdout.write(c);
  });
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
  for (const sig of ["SIGTERM", "SIGINT"] as const) process.on(sig, () => child.kill(sig));
}
