import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SESSION_LIMITS } from "../src/core/sandbox/limits.ts";
import { planCgroups } from "../src/core/sandbox/cgroups.ts";
import { joinCgroups } from "../src/host/sandbox-spawn.ts";
import { findSessionCgroupBases, makeSessionCgroups } from "../src/host/session-cgroups.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

// The cgroup writer against directories laid out as cgroupfs lays them out (a v1 hierarchy per
// controller, or one v2 hierarchy whose root has cgroup.controllers): what it writes is what the
// kernel would be told. The live tier's attack table proves the kernel then holds the bound.
const scratch = makeScratch("cgroups");
const root = scratch.root;
afterAll(() => scratch.remove());
/** A missing file reads as "(missing)", so a bound the writer skipped fails an assertion, not the test's own read. */
const read = (f: string) => (existsSync(f) ? readFileSync(f, "utf8") : "(missing)");

describe("makeSessionCgroups", () => {
  it("cgroup v1: a pids and a memory cgroup, each with its bound", () => {
    const pids = join(root, "v1/pids/mosaic-sessions");
    const memory = join(root, "v1/memory/mosaic-sessions");
    const dirs = makeSessionCgroups(
      planCgroups({ pids: { dir: pids, version: 1 }, memory: { dir: memory, version: 1 } }, "run-1"),
    );
    expect(dirs, "one cgroup per hierarchy").toEqual([join(pids, "run-1"), join(memory, "run-1")]);
    expect(read(join(pids, "run-1/pids.max")), "the session's tasks are bounded").toBe(
      String(SESSION_LIMITS.tasks.value),
    );
    expect(read(join(memory, "run-1/memory.limit_in_bytes")), "the session's memory as a whole is bounded").toBe(
      String(SESSION_LIMITS.memoryBytes.value),
    );
    expect(
      existsSync(join(memory, "run-1/memory.memsw.limit_in_bytes")),
      "swap accounting missing on this host: skipped, not failed",
    ).toBe(false);
  });
  it("cgroup v2: one cgroup with both bounds, the controllers enabled for it", () => {
    const hier = join(root, "v2");
    mkdirSync(hier, { recursive: true });
    writeFileSync(join(hier, "cgroup.controllers"), "cpu memory pids\n");
    const base = join(hier, "mosaic-sessions");
    const v2 = { dir: base, version: 2 } as const;
    const dirs = makeSessionCgroups(planCgroups({ pids: v2, memory: v2 }, "run-3"));
    expect(dirs, "one cgroup holds both controllers").toEqual([join(base, "run-3")]);
    expect(read(join(base, "run-3/pids.max")), "tasks bounded").toBe(String(SESSION_LIMITS.tasks.value));
    expect(read(join(base, "run-3/memory.max")), "memory bounded").toBe(String(SESSION_LIMITS.memoryBytes.value));
  });
  it("the joining shell writes its own pid into each cgroup.procs, then execs the command as that pid; a cgroup it cannot join ends it with 125 and the command never runs (control: every file writable, it runs)", () => {
    const dir = join(root, "join");
    mkdirSync(dir, { recursive: true });
    const procs = [join(dir, "pids.procs"), join(dir, "memory.procs")];
    const marker = join(dir, "ran");
    const command = ["/bin/sh", "-c", 'echo $$ > "$0"', marker];
    const run = (files: string[]) => {
      const [cmd, ...args] = joinCgroups(files, command);
      return spawnSync(cmd!, args, { encoding: "utf8" });
    };
    const joined = run(procs);
    expect(joined.status, joined.stderr).toBe(0);
    const pid = read(marker).trim();
    expect(
      procs.map(read).map((t) => t.trim()),
      "each cgroup got the pid the command then ran as",
    ).toEqual([pid, pid]);
    rmSync(marker);
    const refused = run([procs[0]!, join(dir, "gone", "cgroup.procs")]);
    expect(refused.status, "a cgroup it cannot join: the launch's command does not start").toBe(125);
    expect(existsSync(marker), "the command never ran, unbounded").toBe(false);
  });
  it("finds each controller's writable hierarchy in /proc/self/mounts' shape, and none where nothing is mounted", () => {
    const v1 = join(root, "find-v1");
    mkdirSync(join(v1, "pids"), { recursive: true });
    mkdirSync(join(v1, "memory"), { recursive: true });
    const mounts = [
      { dir: join(v1, "pids"), type: "cgroup", options: ["rw", "pids"] },
      { dir: join(v1, "memory"), type: "cgroup", options: ["rw", "memory"] },
    ];
    expect(findSessionCgroupBases(mounts)).toEqual({
      pids: { dir: join(v1, "pids/mosaic-sessions"), version: 1 },
      memory: { dir: join(v1, "memory/mosaic-sessions"), version: 1 },
    });
    expect(findSessionCgroupBases([])).toEqual({ pids: null, memory: null });
  });
  it("a sandbox joins every cgroup before it execs the command; with none, the command runs as it is", () => {
    expect(joinCgroups([], ["setpriv", "--", "bwrap"]), "no cgroup: nothing in front").toEqual([
      "setpriv",
      "--",
      "bwrap",
    ]);
    const cmd = joinCgroups(["/cg/pids/x/cgroup.procs", "/cg/memory/x/cgroup.procs"], ["bwrap", "--", "true"]);
    expect(cmd.slice(0, 2), "a shell joins first").toEqual(["/bin/sh", "-c"]);
    expect(cmd.slice(3), "each cgroup.procs, then the command").toEqual([
      "sh",
      "/cg/pids/x/cgroup.procs",
      "/cg/memory/x/cgroup.procs",
      "--",
      "bwrap",
      "--",
      "true",
    ]);
  });
});

describe("planCgroups: each cgroup names the controllers it holds", () => {
  it("cgroup v1: one controller a hierarchy; cgroup v2: both in one", () => {
    const v1 = planCgroups(
      { pids: { dir: "/cg/pids/s", version: 1 }, memory: { dir: "/cg/memory/s", version: 1 } },
      "r",
    );
    expect(v1.dirs.map((d) => [d.dir, d.controllers])).toEqual([
      ["/cg/pids/s/r", ["pids"]],
      ["/cg/memory/s/r", ["memory"]],
    ]);
    const v2 = planCgroups({ pids: { dir: "/cg/s", version: 2 }, memory: { dir: "/cg/s", version: 2 } }, "r");
    expect(v2.dirs.map((d) => [d.dir, d.controllers])).toEqual([["/cg/s/r", ["pids", "memory"]]]);
    expect(planCgroups({ pids: null, memory: null }, "r").dirs, "a user caller: none").toEqual([]);
  });
});
