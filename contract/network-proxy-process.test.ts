// Each session's model proxy is a process of its own, started by the host (serveModelProxy()):
// what one session sends costs at most its own proxy. Here the host is a process of its own too
// (contract/support/model-proxy-host.ts, serving two or three sessions' proxies), so the test sees
// what the launcher's process would: whether it goes on, its memory, and whether another session's
// proxy still forwards. Each protection beside its control.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { PROXY_LIMITS, type ProxyLimits } from "../src/core/network/proxy-limits.ts";
import { serveModelProxy, type ModelProxyOptions } from "../src/host/model-proxy.ts";
import { isRunning } from "./support/proxy-procs.ts";
import { recordingUpstream, startHost } from "./support/proxy-host.ts";

const scratch = makeScratch("proxy-process");
afterAll(() => scratch.remove());
const KEY = "stand-in-real-key-process";
const CALL = JSON.stringify({ model: "m", max_tokens: 8, messages: [{ role: "user", content: "hi" }] });
const MiB = 1024 * 1024;

function options(name: string, upstream: string, limits: Partial<ProxyLimits> = {}): ModelProxyOptions {
  const dir = join(scratch.root, name);
  mkdirSync(dir, { recursive: true });
  return {
    socket: join(dir, "model.sock"),
    upstream,
    credential: { header: "x-api-key", value: KEY },
    mode: "model-only",
    egressLog: join(dir, "egress.jsonl"),
    limits,
  };
}

type Answer = { status: number; body: string } | { status: -1; error: string };
function post(socket: string, body: string | Buffer, method = "POST", path = "/v1/messages"): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      { socketPath: socket, method, path, headers: { "content-type": "application/json" } },
      (res) => {
        let b = "";
        res.on("data", (c: Buffer) => (b += c));
        res.on("end", () => resolve({ status: res.statusCode!, body: b }));
        res.on("error", (e) => resolve({ status: -1, error: e.message }));
      },
    );
    req.on("error", (e) => resolve({ status: -1, error: e.message }));
    req.end(body);
  });
}

const lines = (f: string) =>
  existsSync(f)
    ? readFileSync(f, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
const gone = async (pid: number, ms = 8_000) => {
  for (const until = Date.now() + ms; Date.now() < until && isRunning(pid); )
    await new Promise((r) => setTimeout(r, 50));
  return !isRunning(pid);
};
const status = (pid: number) => readFileSync(`/proc/${pid}/status`, "utf8");
const peakRss = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(status(pid))?.[1] ?? "NaN") * 1024;

/** 3 million empty objects in messages: under the shipped jsonContainers bound it is refused unparsed; past it, parsed, some 200 MiB of heap. */
const FLOOD = `{"model":"m","max_tokens":8,"messages":[${"{},".repeat(3_000_000)}{}]}`;

describe("each session's proxy in a process of its own", () => {
  it("the credential is on no command line and in no environment; the heap is bounded; close() ends the process, writes the last lines and removes the socket", async () => {
    const up = await recordingUpstream();
    const o = options("own", up.url);
    const host = await startHost([o]);
    try {
      const pid = host.proxyPids[0]!;
      expect(pid, "the proxy is not the host's own process").not.toBe(host.pid);
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const environ = readFileSync(`/proc/${pid}/environ`, "utf8");
      expect(cmdline.join(" ")).not.toContain(KEY);
      expect(environ).not.toContain(KEY);
      expect(cmdline, "its heap's bound").toContain(`--max-old-space-size=${PROXY_LIMITS.heapMiB.value}`);
      expect((await post(o.socket, CALL)).status).toBe(200);
      expect(
        up.seen.map((s) => s.headers["x-api-key"]),
        "the key went up from the proxy's process",
      ).toEqual([KEY]);
      expect(await host.ask("close 0", "closed"), "close() resolved").not.toBeNull();
      expect(isRunning(pid), "the proxy's process is gone when close() resolves").toBe(false);
      expect(existsSync(o.socket), "and its socket").toBe(false);
      expect(await host.ping(), "the host goes on").not.toBeNull();
    } finally {
      await host.stop();
      await up.close();
    }
  });

  it("a body that exhausts a proxy's heap ends that proxy alone, said in its log: the host and another session's proxy go on; control: with the heap raised it is read and answered", async () => {
    const up = await recordingUpstream();
    const raised = { jsonContainers: 1e9 } satisfies Partial<ProxyLimits>;
    const small = options("heap-small", up.url, { ...raised, heapMiB: 64 });
    const other = options("heap-other", up.url);
    const control = options("heap-control", up.url, { ...raised, heapMiB: 2048 });
    const host = await startHost([small, other, control]);
    try {
      const rss0 = await host.ping();
      const r = await post(small.socket, FLOOD);
      expect(r.status, `the proxy with a 64 MiB heap ended under the body (${JSON.stringify(r).slice(0, 200)})`).toBe(
        -1,
      );
      expect(await gone(host.proxyPids[0]!), "its process is gone").toBe(true);
      // The host writes the line from its exit handler, a moment after the process is gone.
      const endedLine = () => lines(small.egressLog).find((l) => l.outcome === "proxy-ended");
      for (let i = 0; i < 100 && endedLine() === undefined; i++) await new Promise((r) => setTimeout(r, 50));
      const ended = endedLine();
      expect(ended?.why, "the host said so in the session's egress log").toMatch(
        /^the session's model proxy ended \(signal SIGABRT|exit/,
      );
      const rss1 = await host.ping();
      expect(rss1, "the host goes on").not.toBeNull();
      expect(rss1! - rss0!, "and its memory did not take the body's parse").toBeLessThan(32 * MiB);
      expect((await post(other.socket, CALL)).status, "another session's proxy forwards").toBe(200);
      expect((await post(small.socket, CALL)).status, "the session itself has no model now").toBe(-1);
      const c = await post(control.socket, FLOOD);
      expect(c.status, "control: with the heap raised the same body is parsed and refused by the body check").toBe(400);
      expect(peakRss(host.proxyPids[2]!), "control: it took more than the small heap").toBeGreaterThan(128 * MiB);
      expect(up.seen.length, "only the plain call went up").toBe(1);
    } finally {
      await host.stop();
      await up.close();
    }
    // The control parses the whole body in a 2 GiB heap: seconds alone, a minute and more when the
    // code is instrumented (the sweep) on a loaded machine. The bound is the heap, not the clock.
  }, 240_000);

  it("a proxy process that cannot start: listening rejects with its exit and stderr, its log says so, and close() removes the socket", async () => {
    const o = options("cannot-start", "http://127.0.0.1:1");
    const p = serveModelProxy({ ...o, child: { execArgv: ["--no-such-node-flag"], env: {} } });
    expect(existsSync(o.socket), "the host bound the socket before the process started").toBe(true);
    await expect(p.listening).rejects.toThrow(
      /^the model proxy's process ended before it listened \(exit \d+\): .*--no-such-node-flag/,
    );
    await p.close();
    expect(existsSync(o.socket)).toBe(false);
    expect(
      lines(o.egressLog).map((l) => l.outcome),
      "the session's log says its proxy ended: that session has no model",
    ).toEqual(["proxy-ended"]);
  });

  it("when the host process ends, each proxy process it started ends with it", async () => {
    const up = await recordingUpstream();
    const host = await startHost([options("orphan-a", up.url), options("orphan-b", up.url)]);
    try {
      expect(host.proxyPids.every(isRunning)).toBe(true);
      process.kill(host.pid, "SIGKILL");
      await host.exit;
      for (const pid of host.proxyPids) expect(await gone(pid), `proxy ${pid} ended with its host`).toBe(true);
    } finally {
      for (const pid of host.proxyPids.filter(isRunning)) process.kill(pid, "SIGKILL");
      await up.close();
    }
  });

  it("a proxy closed before it listened, its listening never awaited (a launch that failed), and one that ends on its own with a log it cannot write: the host goes on", async () => {
    const up = await recordingUpstream();
    const dir = join(scratch.root, "unwritable");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "a-file"), "");
    const unwritable = { ...options("unwritable", up.url), egressLog: join(dir, "a-file", "egress.jsonl") };
    const other = options("unwritable-other", up.url);
    const host = await startHost([unwritable, other]);
    try {
      const early = JSON.stringify(options("early", up.url));
      expect(await host.ask(`serve-and-close ${early}`, "closed-early"), "closed before listening").not.toBeNull();
      expect(await host.ping(), "the host goes on after a proxy that never listened").not.toBeNull();
      process.kill(host.proxyPids[0]!, "SIGKILL");
      expect(await gone(host.proxyPids[0]!)).toBe(true);
      for (let i = 0; i < 100 && !host.stderr().includes("proxy-ended"); i++)
        await new Promise((r) => setTimeout(r, 20));
      expect(host.stderr(), "the end is said on stderr when the log cannot take it").toMatch(
        /"outcome":"proxy-ended".*signal SIGKILL/,
      );
      expect(await host.ping(), "the host goes on").not.toBeNull();
      expect((await post(other.socket, CALL)).status, "another session's proxy forwards").toBe(200);
    } finally {
      await host.stop();
      await up.close();
    }
  });
});
