// Runs the end-of-session check (or the handover) over and over in a process of its own while a
// racer swaps names in the workspace, so the test's own process stays out of the way (and out of
// the sweep's per-test coverage), and a run that hangs on a fifo can be told from one that ends.
// Prints one JSON line: how many ran, what they did, and how often the watched path beyond the
// workspace differed from how it was before the first (its mode, owner, or being there at all).
//   node check-loop.ts check <ws> <quarantine> <n> [<watched>]
//   node check-loop.ts handover <ws> - <n> <watched>        as root: hands the workspace to 65534
//   node check-loop.ts blocking-open <ws> <path> <n>         control: lstat, then a plain blocking open of what was a file
// A run that hangs sleeps in a fifo's open, which its watcher sees in /proc (racer.ts's watchLoop).
import { closeSync, lstatSync, openSync, writeSync } from "node:fs";
import { handOver } from "../../src/host/handover.ts";
import { checkWorkspace } from "../../src/host/workspace-check.ts";

const [mode, ws, arg, n, watched] = process.argv.slice(2) as [string, string, string, string, string | undefined];

/** The watched path as it is: mode and owner, or absent. */
const look = () => {
  const st = watched === undefined ? undefined : lstatSync(watched, { throwIfNoEntry: false });
  return st === undefined ? "absent" : `${(st.mode & 0o7777).toString(8)} ${st.uid}`;
};

function blockingOpens(path: string): void {
  try {
    if (lstatSync(path).isFile()) {
      writeSync(1, "open\n");
      closeSync(openSync(path, "r"));
      writeSync(1, "ok\n");
    }
  } catch {}
}

const before = look();
const tally = { ran: 0, cleared: 0, moved: 0, handed: 0, changed: 0 };
for (let i = 0; i < Number(n); i++) {
  if (mode === "blocking-open") blockingOpens(arg);
  else if (mode === "handover") {
    try {
      tally.handed += handOver(ws, { uid: 65534, gid: 65534 });
    } catch {}
  } else {
    const r = checkWorkspace(ws, arg);
    if (r.verdict !== "clean") {
      if (r.done.some((d) => d.did === "cleared-setid")) tally.cleared++;
      if (r.done.some((d) => d.did === "moved")) tally.moved++;
    }
  }
  tally.ran++;
  if (look() !== before) tally.changed++;
}
process.stdout.write(`${JSON.stringify(tally)}\n`);
