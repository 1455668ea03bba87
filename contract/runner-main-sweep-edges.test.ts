// The session runner (src/host/runner/main.ts) as a real process, at the edges of its start and
// its stop: a stderr the host closed, a stdin it cannot read or that holds exactly 64 KiB, SIGINT,
// a second signal while the role is being released, a crash after the claim. The set-up is
// contract/support/runner-main-child.ts (that of contract/runner-main.test.ts).
import { closeSync, openSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import {
  CAP,
  type Child,
  REFUSED,
  broker,
  count,
  ok,
  refusedToolCall,
  runDir,
  runner,
  sends,
  session,
  stopOnce,
  verbs,
  withMessages,
} from "./support/runner-main-child.ts";

// StrykerJS picks a mutated file's tests by the import graph, and this file only spawns main.ts:
// an import that never runs (main.ts would start a runner in the test's worker) puts it in the graph.
if (process.env.MOSAIC_NEVER_SET_IN_TESTS === "load the runner") await import("../src/host/runner/main.ts");
const scratch = makeScratch("runner-main-sweep-edges");
afterAll(() => scratch.remove());
/** The children's environment: a compile cache shared by this file's runners, so only the first compiles. */
const ENV = { PATH: "/usr/bin:/bin", NODE_COMPILE_CACHE: join(scratch.root, "compile-cache") };

describe("the session runner at the edges of its start and stop", () => {
  it("a stderr the host closed is no crash: the runner claims, replies and releases all the same", async () => {
    const r = runDir(scratch.root);
    const out = await session(
      r,
      ENV,
      withMessages([{ id: "m1", from: "pm", kind: "message", body: "hello" }]),
      stopOnce((seen) => count(seen, "message.send") === 1 && seen.at(-1)?.verb === "message.read"),
      { onSpawn: (child) => child.stderr!.destroy() },
    );
    expect(out.code).toBe(0);
    expect(sends(out.seen)).toEqual([{ to: "pm", kind: "result", replyTo: "m1", body: "reply to hello" }]);
    expect(verbs(out.seen)).toEqual(["role.claim", "message.read", "message.send", "message.read", "role.release"]);
  });

  it("SIGINT after the claim stops it as SIGTERM does: the role released, exit 0 naming SIGINT", async () => {
    let stopped = false;
    const out = await session(
      runDir(scratch.root),
      ENV,
      (q) => (q.verb === "message.read" ? ok({ messages: [] }) : ok()),
      (seen, child) => {
        if (stopped || count(seen, "message.read") < 2) return;
        stopped = true;
        child.kill("SIGINT");
      },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr).toContain("mosaic runner: exit 0: SIGINT\n");
    expect(verbs(out.seen)).toEqual(["role.claim", "message.read", "role.release"]);
  });

  it("a second signal while the role is being released changes nothing: one release, one exit line", async () => {
    const r = runDir(scratch.root);
    let child: Child | null = null;
    const answers: unknown[] = [];
    const out = await session(
      r,
      ENV,
      async (q) => {
        if (q.verb === "message.read") return ok({ messages: [] });
        if (q.verb !== "role.release" || child === null) return ok();
        // The release is held: a second signal lands, then a tool call's round trip shows the
        // runner has taken it (its handler runs before a socket event that came after it).
        child.kill("SIGINT");
        answers.push(await refusedToolCall(r, 7));
        return ok();
      },
      stopOnce((seen) => count(seen, "message.read") >= 2),
      { onSpawn: (c) => (child = c) },
    );
    expect(answers).toEqual([REFUSED(7)]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stderr.match(/ exit /g)).toHaveLength(1);
    expect(out.stderr).toContain("mosaic runner: exit 0: SIGTERM\n");
    expect(count(out.seen, "role.release")).toBe(1);
  });

  it("a stdin it cannot read is no capability line (2)", async () => {
    const r = runDir(scratch.root);
    const fd = openSync(join(r.dir, "write-only"), "w");
    try {
      const out = await runner([r.dir], ENV, { stdin: fd });
      expect([out.code, out.stderr]).toEqual([2, "mosaic runner: exit 2: stdin: no capability line\n"]);
    } finally {
      closeSync(fd);
    }
  });

  it("a first line of exactly 64 KiB without a newline is still read as the line; one byte more is none", async () => {
    const r = runDir(scratch.root);
    const at = await runner([r.dir], ENV, { stdin: "x".repeat(64 * 1024) });
    expect([at.code, at.stderr]).toEqual([2, "mosaic runner: exit 2: stdin: the first line is not JSON\n"]);
    const over = await runner([r.dir], ENV, { stdin: "x".repeat(64 * 1024 + 1) });
    expect([over.code, over.stderr]).toEqual([2, "mosaic runner: exit 2: stdin: no capability line\n"]);
  });

  it("the capability line ends at its newline: what follows it is not read into it", async () => {
    const out = await session(
      runDir(scratch.root),
      ENV,
      (q) => (q.verb === "message.read" ? ok({ messages: [] }) : ok()),
      stopOnce((seen) => count(seen, "message.read") >= 2),
      { stdin: `${CAP}{"cap":"another"}\nmore` },
    );
    expect(out.code, out.stderr).toBe(0);
    expect(out.seen.every((q) => q.cap === "cap-xyz")).toBe(true);
    expect(verbs(out.seen)).toEqual(["role.claim", "message.read", "role.release"]);
  });

  it("nothing past the capability line is read: a host that keeps writing is held by the pipe", async () => {
    let child: Child | null = null;
    let pending = -1;
    const more = 4 * 1024 * 1024;
    const out = await session(
      runDir(scratch.root),
      ENV,
      (q) => (q.verb === "message.read" ? ok({ messages: [] }) : ok()),
      (seen, c) => {
        if (pending !== -1 || count(seen, "message.read") < 20) return;
        pending = child!.stdin!.writableLength;
        c.kill("SIGTERM");
      },
      { stdin: CAP + "x".repeat(more), keepStdinOpen: true, onSpawn: (c) => (child = c) },
    );
    expect(out.code, out.stderr).toBe(0);
    // The pipe and the runner's stream buffer hold a few hundred KiB at most: the rest waits.
    expect(pending).toBeGreaterThan(more / 2);
  });

  it("a crash after the claim (no tool socket to listen on) exits 2 naming it, and releases the role", async () => {
    const r = runDir(scratch.root);
    const b = await broker(r.brokerSocket, () => ok());
    try {
      const out = await runner([r.dir], ENV, { stdin: CAP });
      expect(out.code, out.stderr).toBe(2);
      expect(out.stderr).toContain("mosaic runner: exit 2: the runner crashed: listen EINVAL: invalid argument\n");
      expect(b.seen.map((q) => q.verb)).toEqual(["role.claim", "role.release"]);
    } finally {
      b.server.close();
    }
  });
});
