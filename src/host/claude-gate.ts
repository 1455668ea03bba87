// The Claude Code PreToolUse hook: node src/host/claude-gate.ts <policy.json>, the hook's JSON on
// stdin. Exit 0 allows the call; exit 2 blocks it and Claude Code hands our stderr to the model.
// Anything that goes wrong (bad JSON, a missing or malformed policy, a crash) exits 2.
// It runs once per tool call: the bundle's hook command points NODE_COMPILE_CACHE at a cache the
// host warmed under the read-only bundle (warmGateCache). It never turns on a cache of its own,
// which would land in the session's writable /tmp, where a session could plant code for the gate.
import type { Decision } from "../core/gate/decide.ts";
import type { FsView } from "../core/gate/fs-view.ts";

/** What the hook decided, for its report to the runner's tripwire: absent when there was no call to name. */
export type HookCall = { call: unknown; tool: unknown; input: unknown };
export type HookOutcome = ({ code: 0 } | { code: 2; stderr: string }) & { call?: HookCall };

type Decide = (policy: unknown, tool: unknown, input: unknown, fs: FsView) => Decision;

const blocked = (why: string): HookOutcome => ({ code: 2, stderr: `mosaic gate: ${why}\n` });

/** The hook's answer for its stdin and the policy file's text (or why it could not be read). */
export function hookOutcome(
  stdin: string,
  policyText: string | { unreadable: string },
  decide: Decide,
  fs: FsView,
): HookOutcome {
  if (typeof policyText !== "string") return blocked(`the policy could not be read (${policyText.unreadable})`);
  let policy: unknown;
  try {
    policy = JSON.parse(policyText);
  } catch {
    return blocked("the policy is not JSON");
  }
  let hook: unknown;
  try {
    hook = JSON.parse(stdin);
  } catch {
    // safety: gate-hook-bad-json-allows
    return blocked("the hook input is not JSON");
  }
  if (typeof hook !== "object" || hook === null) return blocked("the hook input is not a JSON object");
  const { tool_name, tool_input, tool_use_id } = hook as Record<string, unknown>;
  const d = decide(policy, tool_name, tool_input, fs);
  const call = { call: tool_use_id, tool: tool_name, input: tool_input };
  return d.allow ? { code: 0, call } : { ...blocked(d.reason), call };
}

/** What the hook needs from the machine. */
export type GateModules = { decide: Decide; fs: FsView; readFile: (path: string) => string };

export async function loadGate(): Promise<GateModules> {
  const [{ readFileSync }, { decide }, { realFsView }] = await Promise.all([
    import("node:fs"),
    import("../core/gate/decide.ts"),
    import("./fs-view.ts"),
  ]);
  return { decide, fs: realFsView(), readFile: (p) => readFileSync(p, "utf8") };
}

/** The whole hook for its arguments and stdin: any failure on the way, a module that will not load included, blocks. */
export async function runHook(
  args: readonly string[],
  stdin: () => Promise<string>,
  load: () => Promise<GateModules>,
): Promise<HookOutcome> {
  try {
    const gate = await load();
    const file = args[0];
    let policyText: string | { unreadable: string };
    if (file === undefined) policyText = { unreadable: "no policy file argument" };
    // Relative, it would name a file in Claude Code's working directory: the workspace, which the session writes.
    else if (!file.startsWith("/"))
      policyText = { unreadable: `${JSON.stringify(file)} is not an absolute path` }; // safety: gate-hook-relative-policy
    else {
      try {
        policyText = gate.readFile(file);
      } catch (e) {
        policyText = { unreadable: `${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}` };
      }
    }
    return hookOutcome(await stdin(), policyText, gate.decide, gate.fs);
  } catch (e) {
    // safety: gate-hook-crash-allows
    return {
      code: 2,
      stderr: `mosaic gate: the gate crashed, so it blocks (${e instanceof Error ? e.message : String(e)})\n`,
    };
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

async function main(): Promise<void> {
  // Until the verdict is in, the answer is "block": an early exit must never leave exit code 0
  // (or Node's 1 for an uncaught error, which Claude Code treats as a non-blocking error).
  // A module graph that never settles would otherwise end with Node's 13.
  process.exitCode = 2; // safety: gate-hook-exit-not-preset
  const crash = (e: unknown) => {
    process.stderr.write(
      `mosaic gate: the gate crashed, so it blocks (${e instanceof Error ? e.message : String(e)})\n`,
    );
    process.exit(2);
  };
  process.on("uncaughtException", crash); // safety: gate-hook-uncaught-ignored
  // Node's own handling of a rejection is a flag away from a warning (--unhandled-rejections=warn).
  process.on("unhandledRejection", crash); // safety: gate-hook-rejection-ignored
  // Loaded on every run, so the host's warm-up puts it in the compile cache; a report module that
  // will not load changes no verdict (the tripwire then fails the turn instead).
  const reporting = import("./gate-report.ts").catch(() => null);
  const out = await runHook(process.argv.slice(2), readStdin, loadGate);
  const report = await reporting;
  if (out.call !== undefined && report !== null)
    // The tripwire's evidence that the gate saw this call; the verdict stands whether it arrives or not.
    await report.reportDecision(process.env.MOSAIC_TOOL_SOCKET, { ...out.call, allow: out.code === 0 });
  if (out.code === 2) process.stderr.write(out.stderr);
  process.exitCode = out.code;
}

if (import.meta.main) await main();
