// The front of a live turn run without the runner: forwards the in-sandbox model port to the
// host's proxy as the runner does (host/runner/model-forward.ts), runs the harness, and exits with
// its status. Usage: node forward-then-exec.ts <port> <socket> <command> [args...]
import { spawn } from "node:child_process";
import { forwardModelPort } from "../../host/runner/model-forward.ts";

const [port, socket, command, ...args] = process.argv.slice(2);
if (port === undefined || socket === undefined || command === undefined) {
  process.stderr.write("usage: forward-then-exec.ts <port> <socket> <command> [args...]\n");
  process.exit(2);
}
const server = await forwardModelPort(Number(port), socket);
const child = spawn(command, args, { stdio: "inherit" });
child.on("error", (e) => {
  process.stderr.write(`forward-then-exec: ${command}: ${e.message}\n`);
  process.exit(127);
});
child.on("exit", (code, signal) => {
  server.close();
  process.exit(code ?? (signal === null ? 1 : 128));
});
