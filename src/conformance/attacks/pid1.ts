// The runner's stand-in for the attack table: pid 1 of the sandbox, on the execute-only node, with
// a capability canary in memory (read from stdin, as the runner reads its capability). It runs
// <run>/attack.sh with sh and exits with its status. It loads nothing but node's own modules.
import { spawn } from "node:child_process";

const runDir = process.argv[2] ?? "";
const held: string[] = [];
let input = "";
process.stdin.setEncoding("utf8");
let started = false;
// The first line is the capability; a terminal in front of stdin may never send an end.
const start = () => {
  if (started) return;
  started = true;
  // Kept reachable for the whole run, as the runner keeps its capability.
  held.push(input.trim());
  const child = spawn("/bin/sh", [`${runDir}/attack.sh`], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, RUNNER_PID: String(process.pid) },
  });
  child.on("exit", (code, signal) => {
    process.exitCode = code ?? (signal !== null ? 128 : 1);
    // stdout may be a pipe, which node writes asynchronously: exit once the line is out.
    process.stdout.write(`RUNNER-ALIVE ${held.length}\n`, () => process.exit());
  });
};
process.stdin.on("data", (d: string) => {
  input += d;
  if (input.includes("\n")) start();
});
process.stdin.on("end", start);
process.on("SIGTERM", () => process.exit(0));
