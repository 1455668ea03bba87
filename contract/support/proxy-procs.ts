// The model proxy processes a host process started (serveModelProxy() runs each session's proxy
// as a child process of its own): their pids, read from /proc, for a test to count their
// descriptors and memory or to end one on purpose.
import { readFileSync, readdirSync } from "node:fs";

const read = (f: string) => {
  try {
    return readFileSync(f, "utf8");
  } catch {
    return "";
  }
};

/** The live children of `pid` whose command line runs the model proxy's process entry. */
export function proxyPidsOf(pid: number | "self"): number[] {
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const kids = tasks.flatMap((t) => read(`/proc/${pid}/task/${t}/children`).split(" ").filter(Boolean).map(Number));
  return kids.filter((k) => read(`/proc/${k}/cmdline`).includes("model-proxy-main.ts"));
}

/** Whether a pid is a live process (not a zombie). */
export function isRunning(pid: number): boolean {
  const stat = read(`/proc/${pid}/stat`);
  return stat !== "" && !/^\d+ \(.*\) Z /.test(stat);
}
