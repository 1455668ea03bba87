import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Bench } from "tinybench";
import { decide } from "../../src/core/gate/decide.ts";
import { realFsView } from "../../src/host/fs-view.ts";
import { warmGateCache } from "../../src/host/warm-gate-cache.ts";
import { REPO_ROOT } from "../../src/conformance/golden.ts";
import { layOutTree, memoryView, type Tree } from "../../src/conformance/tree.ts";

/** A workspace with paths four levels deep, a link on the way, and a few neighbours. */
const TREE: Tree = {
  "/data/ws/src/core/gate/decide.ts": "file",
  "/data/ws/src/core/gate/resolve.ts": "file",
  "/data/ws/lib": { link: "src/core" },
  "/data/ws/docs/a/b/c.md": "file",
  "/data/other/secret.txt": "file",
};
const callsIn = (ws: string): [string, unknown][] => [
  ["read", { path: "src/core/gate/decide.ts" }],
  ["write", { path: "lib/gate/new/file.ts", content: "x" }],
  ["Read", { file_path: `${ws}/docs/a/b/c.md` }],
  ["edit", { path: "src/core/gate/resolve.ts", edits: [] }],
];
const CALLS_PER_ROUND = 4;
const POLICY = { workspace: "/data/ws", home: "/run/home", builtInTools: ["read", "write", "edit", "Read"], typedTools: [] };

const rate = (t: { result: unknown }) => Math.round((t.result as { throughput: { mean: number } }).throughput.mean * CALLS_PER_ROUND).toLocaleString("en");

/**
 * Decisions per second over the tree in memory and laid out on disk, and the Claude Code hook's
 * whole-process round trip against a bare `node -e 0` started the same way, as a ratio.
 */
export async function run(): Promise<void> {
  const root = join(REPO_ROOT, ".scratch", "bench-gate");
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  try {
    layOutTree(TREE, root);
    const rooted = { ...POLICY, workspace: root + POLICY.workspace, home: root + POLICY.home };
    const mem = memoryView(TREE);
    const real = realFsView();
    const memCalls = callsIn(POLICY.workspace);
    const realCalls = callsIn(rooted.workspace);
    const blocked = [...memCalls.filter(([t, i]) => !decide(POLICY, t, i, mem).allow), ...realCalls.filter(([t, i]) => !decide(rooted, t, i, real).allow)];
    if (blocked.length > 0) throw new Error(`bench calls blocked, the bench would measure blocks: ${JSON.stringify(blocked)}`);
    const bench = new Bench({ time: 800 });
    bench.add("in memory", () => {
      for (const [tool, input] of memCalls) decide(POLICY, tool, input, mem);
    });
    bench.add("real filesystem", () => {
      for (const [tool, input] of realCalls) decide(rooted, tool, input, real);
    });
    await bench.run();
    for (const t of bench.tasks) console.log(`decide(), paths four levels deep, ${t.name}: ${rate(t)} decisions/s`);

    const policyFile = join(root, "policy.json");
    writeFileSync(policyFile, JSON.stringify({ harness: "claude-code", network: "none", services: [], credentials: { set: null }, ...rooted }));
    const stdin = JSON.stringify({ hook_event_name: "PreToolUse", cwd: rooted.workspace, tool_name: "Read", tool_input: { file_path: `${rooted.workspace}/src/core/gate/decide.ts` } });
    const hook = [join(REPO_ROOT, "src/host/claude-gate.ts"), policyFile];
    const bare = ["-e", "0"];
    // Started alike: same node, same stdin, same environment. The bundle's hook command points
    // NODE_COMPILE_CACHE at a cache the host warmed (warmGateCache); "cold" is the gate with none.
    const cache = join(root, "gate-compile-cache");
    warmGateCache(process.execPath, REPO_ROOT, cache);
    const cold = { PATH: process.env.PATH };
    const asBundled = { ...cold, NODE_COMPILE_CACHE: cache };
    const once = (args: string[], env: NodeJS.ProcessEnv) => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(process.execPath, args, { input: stdin, stdio: ["pipe", "ignore", "pipe"], env });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
      return ms;
    };
    const runs = { hook: [] as number[], hookCold: [] as number[], bare: [] as number[] };
    // Interleaved, so drift on a shared machine hits all alike.
    for (let i = 0; i < 30; i++) {
      runs.hook.push(once(hook, asBundled));
      runs.bare.push(once(bare, cold));
      runs.hookCold.push(once(hook, cold));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const b = median(runs.bare);
    const h = median(runs.hook);
    const c = median(runs.hookCold);
    console.log(`hook round trip, median of 30: node -e 0 ${b.toFixed(1)} ms; claude-gate.ts as the bundle starts it (warmed cache) ${h.toFixed(1)} ms, ratio ${(h / b).toFixed(2)}x; with no cache ${c.toFixed(1)} ms, ratio ${(c / b).toFixed(2)}x`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
