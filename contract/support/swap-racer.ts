// A racer for the end-of-session check and the handover: another process of the session's uid that
// keeps swapping one name in the workspace between what the host will act on and a link out of it
// (or a fifo), as fast as it can, until its stdin closes. Each swap is one rename(2), so the name
// is always there, and is now one thing, now the other.
//   node swap-racer.ts file-link <dir> <name> <outside-file>   a setuid file, then a link to the outside file
//   node swap-racer.ts dir-link <dir> <name> <outside-dir>     a directory holding .git/, then a link to the outside directory
//   node swap-racer.ts fifo-file <dir> <name> <stash>          a regular file git accepts as a HEAD, then a fifo
import { spawnSync } from "node:child_process";
import { chmodSync, linkSync, lstatSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const [mode, dir, name, outside] = process.argv.slice(2) as [string, string, string, string | undefined];
const at = (n: string) => join(dir, n);
let stop = false;
process.stdin.on("end", () => (stop = true));
process.stdin.resume();

/** One swap each way; errors (the check moved the name away meanwhile) are part of the race. */
function fileLink(i: number): void {
  symlinkSync(outside!, at(`.l${i}`));
  renameSync(at(`.l${i}`), at(name));
  writeFileSync(at(`.f${i}`), "x");
  chmodSync(at(`.f${i}`), 0o4755);
  renameSync(at(`.f${i}`), at(name));
}

function dirLink(): void {
  // A directory cannot be renamed over: it steps aside while the link stands in its place. The
  // check may move the real one out meanwhile (it finds a nested .git there): it is made again.
  const there = (n: string) => lstatSync(at(n), { throwIfNoEntry: false });
  rmSync(at(".l"), { force: true });
  if (there(name)?.isSymbolicLink()) rmSync(at(name));
  if (there(".aside") !== undefined && there(name) === undefined) renameSync(at(".aside"), at(name));
  if (there(name) === undefined) mkdirSync(at(name));
  mkdirSync(at(`${name}/.git`), { recursive: true });
  symlinkSync(outside!, at(".l"));
  renameSync(at(name), at(".aside"));
  renameSync(at(".l"), at(name));
  hold();
  renameSync(at(name), at(".l"));
  renameSync(at(".aside"), at(name));
}

/** The fifo and the file live in a stash beside the workspace (hard links need one filesystem), where the check does not move them. */
function fifoFile(): void {
  linkSync(join(stash!, "fifo"), at(".next"));
  renameSync(at(".next"), at(name));
  hold();
  linkSync(join(stash!, "file"), at(".next"));
  renameSync(at(".next"), at(name));
  hold();
}

/** Keeps a state a few system calls long, so each side of the swap is there about as long as the other. */
function hold(): void {
  for (let k = 0; k < 3; k++) lstatSync(dir);
}

const stash = outside;
if (mode === "fifo-file") {
  writeFileSync(join(stash!, "file"), "ref: refs/heads/main\n");
  spawnSync("mkfifo", [join(stash!, "fifo")]);
}
if (mode === "dir-link") mkdirSync(at(`${name}/.git`), { recursive: true });
let i = 0;
function batch(): void {
  for (let k = 0; k < 200 && !stop; k++, i++) {
    try {
      if (mode === "file-link") fileLink(i);
      else if (mode === "dir-link") dirLink();
      else fifoFile();
    } catch {}
  }
  if (stop) process.exit(0);
  setImmediate(batch);
}
process.stdout.write("racing\n");
batch();
