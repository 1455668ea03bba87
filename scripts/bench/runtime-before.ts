// `MOSAIC_BENCH_BEFORE=<git rev> npm run bench -- runtime-before`: a session's start (spawn to claim)
// and one fake-adapter turn through this tree's launcher against the same through <rev>'s, rounds
// interleaved in this one process so drift hits both alike. <rev>'s tree is checked out once under
// .scratch/bench-before/ (a detached worktree sharing this node_modules) and imported from there.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import type * as World from "../../src/conformance/worlds/runtime-world.ts";
import type * as Launcher from "../../src/host/launcher.ts";

type Arm = {
  name: string;
  world: typeof World;
  launcher: typeof Launcher;
  w: World.RuntimeWorld;
  start: number[];
  turn: number[];
};

function treeAt(rev: string): string {
  const sha = execFileSync("git", ["-C", REPO_ROOT, "rev-parse", "--verify", `${rev}^{commit}`], {
    encoding: "utf8",
  }).trim();
  const dir = join(REPO_ROOT, ".scratch/bench-before", sha.slice(0, 12));
  if (!existsSync(join(dir, "package.json"))) {
    mkdirSync(join(REPO_ROOT, ".scratch/bench-before"), { recursive: true });
    execFileSync("git", ["-C", REPO_ROOT, "worktree", "add", "--detach", dir, sha], { stdio: "ignore" });
  }
  if (!existsSync(join(dir, "node_modules"))) symlinkSync(join(REPO_ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

async function once(a: Arm, name: string): Promise<void> {
  const p = a.launcher.prepareLaunch(a.w.request(a.w.instance("pi-coder", name, { instance: name })));
  if (p.kind !== "ready") throw new Error(`${a.name}: refused: ${p.code}: ${p.message}`);
  const t0 = performance.now();
  const s = await a.launcher.start(p.prepared);
  await a.world.waitClaimed(a.w, s, name);
  const t1 = performance.now();
  const reply = await a.world.ask(a.w, name, "echo turn-done");
  const t2 = performance.now();
  if (reply.trim() !== "turn-done") throw new Error(`${a.name}: unexpected reply ${JSON.stringify(reply)}`);
  await s.stop();
  a.start.push(t1 - t0);
  a.turn.push(t2 - t1);
}

export async function run(): Promise<void> {
  const rev = process.env.MOSAIC_BENCH_BEFORE ?? "";
  if (rev === "") {
    console.log(
      "runtime-before: set MOSAIC_BENCH_BEFORE=<git rev> to measure this tree's sessions against that revision's; not run",
    );
    return;
  }
  const before = treeAt(rev);
  const arms: Arm[] = [];
  for (const [name, root] of [
    [`before (${rev})`, before],
    ["after (this tree)", REPO_ROOT],
  ] as const) {
    // The world module moved into worlds/ after the before-commit; take whichever the tree has.
    const module = ["src/conformance/worlds/runtime-world.ts", "src/conformance/runtime-world.ts"].find((p) =>
      existsSync(join(root, p)),
    )!;
    const world = (await import(join(root, module))) as typeof World;
    const launcher = (await import(join(root, "src/host/launcher.ts"))) as typeof Launcher;
    arms.push({
      name,
      world,
      launcher,
      w: await world.makeRuntimeWorld(`bench-${name.slice(0, 5)}`),
      start: [],
      turn: [],
    });
  }
  const rounds = 9;
  try {
    // A warm-up launch each (the runner's node copy, the seccomp file, the page cache), not counted.
    for (const a of arms) await once(a, "warm");
    for (const a of arms) (a.start.length = 0), (a.turn.length = 0);
    for (let i = 0; i < rounds; i++) for (const a of i % 2 === 0 ? arms : [...arms].reverse()) await once(a, `r${i}`);
  } finally {
    for (const a of arms) await a.w.close();
  }
  const med = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const [b, a] = arms as [Arm, Arm];
  const line = (what: string, x: number[], y: number[]) =>
    console.log(
      `${what}: ${b.name} ${med(x).toFixed(0)} ms, ${a.name} ${med(y).toFixed(0)} ms (${(med(y) / med(x)).toFixed(2)}x), medians of ${rounds}`,
    );
  line("session start, spawn to claim", b.start, a.start);
  line("one fake-adapter turn through the broker", b.turn, a.turn);
}
