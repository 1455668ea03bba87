// Starting, driving and stopping test hosts. A host that does not answer in its time budget is
// killed with its whole process group (a mutant's infinite loop blocks its worker for good).
import { fork, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FromHost, HostArgs, ProjectInfo, SpecRequest } from "./host-protocol.ts";
import type { RunOutcome } from "./verdict.ts";

const HOST_SCRIPT = join(import.meta.dirname, "host-child.ts");

/** Set in every test host, so a test of the runner itself can stay out of the runner's own runs. */
export const MUTATION_HOST_ENV = "MOSAIC_MUTATION_HOST";

export type RunReply =
  | { kind: "done"; outcome: RunOutcome; loaded: string[] }
  | { kind: "timeout" }
  | { kind: "died"; message: string };

export type Host = {
  index: number;
  tree: string;
  projects: ProjectInfo[];
  /** Files restored since the host's last run: the next run invalidates them. */
  dirty: Set<string>;
  /** One run; `update` writes golden mismatches into the tree for this run only. */
  run(specs: SpecRequest[], changed: string[], budgetMs: number, update?: boolean): Promise<RunReply>;
  close(): Promise<void>;
  kill(): void;
};

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-15).join("\n");
  } catch {
    return "";
  }
}

export async function startHost(index: number, tree: string, args: HostArgs, logFile: string): Promise<Host> {
  const log = openSync(logFile, "a");
  const child: ChildProcess = fork(HOST_SCRIPT, [JSON.stringify(args)], {
    cwd: tree,
    detached: true,
    stdio: ["ignore", log, log, "ipc"],
    env: { ...process.env, CI: "true", [MUTATION_HOST_ENV]: "1" },
  });
  closeSync(log);
  let nextId = 1;
  const waiting = new Map<number, (r: RunReply) => void>();
  let exited: string | null = null;
  let onReady: ((p: ProjectInfo[]) => void) | null = null;
  let onEarlyExit: ((m: string) => void) | null = null;

  child.on("message", (msg: FromHost) => {
    if (msg.type === "ready") onReady?.(msg.projects);
    else if (msg.type === "result") waiting.get(msg.id)?.({ kind: "done", outcome: msg.outcome, loaded: msg.loaded });
    else waiting.get(msg.id)?.({ kind: "died", message: msg.message });
  });
  child.on("exit", (code, signal) => {
    exited = `test host ${index} exited (${signal ?? code}); its log ${logFile}:\n${tail(logFile)}`;
    for (const w of waiting.values()) w({ kind: "died", message: exited });
    waiting.clear();
    onEarlyExit?.(exited);
  });

  let killed = false;
  const gone = new Promise<void>((r) => child.once("exit", () => r()));
  const killGroup = () => {
    killed = true;
    if (child.pid === undefined || exited) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      child.kill("SIGKILL");
    }
  };

  const projects = await new Promise<ProjectInfo[]>((resolve, reject) => {
    onReady = resolve;
    onEarlyExit = (m) => reject(new Error(m));
  });
  onEarlyExit = null;

  return {
    index,
    tree,
    projects,
    dirty: new Set(),
    run(specs, changed, budgetMs, update) {
      if (exited) return Promise.resolve({ kind: "died", message: exited });
      const id = nextId++;
      return new Promise<RunReply>((resolve) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          killGroup();
          resolve({ kind: "timeout" });
        }, budgetMs);
        waiting.set(id, (r) => {
          clearTimeout(timer);
          waiting.delete(id);
          resolve(r);
        });
        child.send({ type: "run", id, specs, changed, ...(update ? { update } : {}) });
      });
    },
    async close() {
      if (exited) return;
      if (killed) return gone;
      child.send({ type: "close" });
      const timer = setTimeout(killGroup, 5_000);
      await gone;
      clearTimeout(timer);
    },
    kill: killGroup,
  };
}
