// Runs the end-of-session check over and over in a process of its own, so a test can tell one that
// finishes from one that hangs (on a fifo a racer swaps in). Prints `done <n>` when all ran.
//   node check-loop.ts check <ws> <quarantine> <n>      the shipped check
//   node check-loop.ts blocking-open <ws> <path> <n>     control: lstat, then a plain blocking open of what was a file;
//                                                         it prints `open` before each open and `ok` after, unbuffered,
//                                                         so a run killed while its last line says `open` hung there
import { closeSync, lstatSync, openSync, writeSync } from "node:fs";
import { checkWorkspace } from "../../src/host/workspace-check.ts";

const [mode, ws, arg, n] = process.argv.slice(2) as [string, string, string, string];
for (let i = 0; i < Number(n); i++) {
  if (mode === "check") checkWorkspace(ws, arg);
  else {
    try {
      if (lstatSync(arg).isFile()) {
        writeSync(1, "open\n");
        closeSync(openSync(arg, "r"));
        writeSync(1, "ok\n");
      }
    } catch {}
  }
}
process.stdout.write(`done ${n}\n`);
