import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { Bench } from "tinybench";
import { decide } from "../../src/core/gate/decide.ts";
import { realFsView } from "../../src/host/fs-view.ts";
import { warmGateCache } from "../../src/host/warm-gate-cache.ts";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { layOutTree, memoryView, type Tree } from "../../src/conformance/worlds/tree.ts";

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
const POLICY = {
  workspace: "/data/ws",
  home: "/run/home",
  builtInTools: ["read", "write", "edit", "Read"],
  typedTools: [],
};

const median = (xs: readonly number[]) => quantile(xs, 0.5);
/** The q-quantile of xs (nearest rank). */
function quantile(xs: readonly number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

const rate = (t: { result: unknown }) =>
  Math.round((t.result as { throughput: { mean: number } }).throughput.mean * CALLS_PER_ROUND).toLocaleString("en");

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
    const blocked = [
      ...memCalls.filter(([t, i]) => !decide(POLICY, t, i, mem).allow),
      ...realCalls.filter(([t, i]) => !decide(rooted, t, i, real).allow),
    ];
    if (blocked.length > 0)
      throw new Error(`bench calls blocked, the bench would measure blocks: ${JSON.stringify(blocked)}`);
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
    writeFileSync(
      policyFile,
      JSON.stringify({ harness: "claude-code", network: "none", services: [], credentials: { set: null }, ...rooted }),
    );
    const stdin = JSON.stringify({
      hook_event_name: "PreToolUse",
      cwd: rooted.workspace,
      tool_name: "Read",
      tool_input: { file_path: `${rooted.workspace}/src/core/gate/decide.ts` },
    });
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
    // Several rounds of interleaved spawns, so drift on a shared machine hits all alike; each round
    // gives its own median ratio, and the spread across rounds says how far one figure can be trusted.
    const ROUNDS = 5;
    const PER_ROUND = 30;
    const all = { hook: [] as number[], hookCold: [] as number[], bare: [] as number[] };
    const ratios = { hook: [] as number[], hookCold: [] as number[] };
    for (let r = 0; r < ROUNDS; r++) {
      const runs = { hook: [] as number[], hookCold: [] as number[], bare: [] as number[] };
      for (let i = 0; i < PER_ROUND; i++) {
        runs.hook.push(once(hook, asBundled));
        runs.bare.push(once(bare, cold));
        runs.hookCold.push(once(hook, cold));
      }
      ratios.hook.push(median(runs.hook) / median(runs.bare));
      ratios.hookCold.push(median(runs.hookCold) / median(runs.bare));
      for (const k of ["hook", "hookCold", "bare"] as const) all[k].push(...runs[k]);
      console.log(
        `  round ${r + 1}/${ROUNDS}: node -e 0 ${median(runs.bare).toFixed(1)} ms, hook ${median(runs.hook).toFixed(1)} ms (${ratios.hook.at(-1)!.toFixed(2)}x), no cache ${median(runs.hookCold).toFixed(1)} ms (${ratios.hookCold.at(-1)!.toFixed(2)}x)`,
      );
    }
    const ms = (xs: number[]) =>
      `${median(xs).toFixed(1)} ms (IQR ${quantile(xs, 0.25).toFixed(1)}–${quantile(xs, 0.75).toFixed(1)})`;
    const spread = (xs: number[]) =>
      `${median(xs).toFixed(2)}x (rounds ${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}x)`;
    console.log(
      `hook round trip, ${ROUNDS} rounds of ${PER_ROUND}, load average ${loadavg()[0]!.toFixed(2)}: node -e 0 ${ms(all.bare)}; claude-gate.ts with the bundle's warmed compile cache ${ms(all.hook)}, ratio ${spread(ratios.hook)}; with no cache ${ms(all.hookCold)}, ratio ${spread(ratios.hookCold)}`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
