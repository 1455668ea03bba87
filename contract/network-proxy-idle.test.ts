// The model proxy's connection bound and idle timeouts, in a process of its own, with its
// descriptors counted in /proc/<pid>/fd: 512 idle connections (eight times the cap) against the
// shipped cap and two controls (no cap; no cap and no timeouts). The timeouts are the table's, scaled
// from seconds to a few hundred ms so the tier does not wait them out: the mechanism is the same at
// any figure. The shipped figures are pinned in network-model.test.ts, and live/model-proxy.test.ts
// holds the finding's 2,000 connections against the shipped proxy, 5 s head timeout included.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { connect, type AddressInfo, type Socket } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { EGRESS_LOG_BUDGET, egressLogBound } from "../src/core/network/egress-log.ts";
import { PROXY_LIMITS, type ProxyLimits } from "../src/core/network/proxy-limits.ts";

const CHILD = join(REPO_ROOT, "contract/support/model-proxy-child.ts");
const scratch = makeScratch("proxy-idle");
afterAll(() => scratch.remove());

type Proxy = { socket: string; log: string; pid: number; stop: () => Promise<void> };

async function upstream(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end("{}"));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function startProxy(name: string, upstreamUrl: string, limits: Partial<ProxyLimits>): Promise<Proxy> {
  const dir = join(scratch.root, name);
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, "model.sock");
  const log = join(dir, "egress.jsonl");
  const opts = {
    socket,
    upstream: upstreamUrl,
    credential: { header: "x-api-key", value: "stand-in-real-key" },
    mode: "model-only",
    egressLog: log,
    limits,
  };
  const child: ChildProcess = spawn(process.execPath, [CHILD, JSON.stringify(opts)], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  // The host prints the pid of the proxy's own process, whose descriptors and memory are the session's cost.
  const pid = await new Promise<number>((ok, fail) => {
    child.stdout!.on("data", (d: Buffer) => {
      const m = /listening (\d+)/.exec(d.toString());
      if (m !== null) ok(Number(m[1]));
    });
    child.once("exit", (code) => fail(new Error(`the proxy exited ${code} before listening`)));
  });
  return {
    socket,
    log,
    pid,
    stop: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null) return ok();
        child.once("exit", () => ok());
        child.kill("SIGTERM");
      }),
  };
}

/**
 * The table's idle timeouts at a fifth of their figure. The request timeout stays the table's (60 s):
 * a head timeout mistaken for it would keep every connection past this test's wait.
 */
const SCALED_TIMEOUTS = {
  headersTimeoutMs: PROXY_LIMITS.headersTimeoutMs.value / 5,
  keepAliveTimeoutMs: PROXY_LIMITS.keepAliveTimeoutMs.value / 5,
  checkEveryMs: PROXY_LIMITS.checkEveryMs.value / 5,
} satisfies Partial<ProxyLimits>;

const fdCount = (pid: number) => readdirSync(`/proc/${pid}/fd`).length;
const readLines = (f: string) => (existsSync(f) ? readFileSync(f, "utf8").split("\n").filter(Boolean) : []);

describe("the model proxy's connections, in its own process", () => {
  it("512 idle connections: the shipped cap holds at most 64 and the head timeout frees them; controls: without the cap it holds 512, without the timeouts too it keeps them", async () => {
    const up = await upstream();
    // Three proxies side by side; the test holds 3 × N client sockets, within this process's descriptor limit.
    const soft = Number(/Max open files\s+(\d+)/.exec(readFileSync("/proc/self/limits", "utf8"))?.[1] ?? "1024");
    const N = Math.min(PROXY_LIMITS.connections.value * 8, Math.floor((soft - 500) / 3));
    expect(N, "enough descriptors to show the bound").toBeGreaterThan(PROXY_LIMITS.connections.value * 4);
    const arms = [
      { name: "shipped", limits: SCALED_TIMEOUTS },
      { name: "no-cap", limits: { ...SCALED_TIMEOUTS, connections: 1_000_000 } },
      {
        name: "no-cap-no-timeouts",
        limits: {
          connections: 1_000_000,
          headersTimeoutMs: 300_000,
          requestTimeoutMs: 600_000,
          keepAliveTimeoutMs: 300_000,
        },
      },
    ] as const;
    const proxies = await Promise.all(arms.map((a) => startProxy(`idle-${a.name}`, up.url, a.limits)));
    const clients: Socket[] = [];
    try {
      const base = proxies.map((p) => fdCount(p.pid));
      // In batches: a Unix socket's listen backlog refuses (EAGAIN) a burst past it, which would be the test's limit, not the proxy's.
      const connected = [0, 0, 0];
      for (let k = 0; k < N; k += 100) {
        await Promise.all(
          proxies.flatMap((p, i) =>
            Array.from(
              { length: Math.min(100, N - k) },
              () =>
                new Promise<void>((ok) => {
                  const c = connect(p.socket);
                  clients.push(c);
                  c.on("error", () => ok());
                  c.on("connect", () => (connected[i]!++, ok()));
                  c.on("close", () => ok());
                }),
            ),
          ),
        );
      }
      expect(connected[1], "every connection to the uncapped proxy was made").toBe(N);
      // The most each proxy holds while the connections are fresh, sampled until the uncapped ones have accepted them all.
      const held = [0, 0, 0];
      // Polled, not slept: a loaded machine accepts slowly, and the bound is on what is held, not when.
      for (const until = Date.now() + 30_000; !(held[1]! >= N - 2 && held[2]! >= N - 2) && Date.now() < until; ) {
        proxies.forEach((p, i) => (held[i] = Math.max(held[i]!, fdCount(p.pid) - base[i]!)));
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(
        held[0],
        `the shipped proxy holds at most its ${PROXY_LIMITS.connections.value} connections (${held.join(", ")} new descriptors)`,
      ).toBeLessThanOrEqual(PROXY_LIMITS.connections.value + 2);
      expect(held[1], "control: without the cap, one descriptor per idle connection").toBeGreaterThanOrEqual(N - 2);
      expect(held[2], "control: the same").toBeGreaterThanOrEqual(N - 2);
      // The head timeout and two check intervals: idle connections are closed with 408.
      // At least that long, then polled until both timed proxies have freed them, for at most 8 s
      // more: a loaded machine closes late, and a proxy without its timeouts must fail well within
      // the mutation runner's budget, not time out.
      await new Promise((r) =>
        setTimeout(r, SCALED_TIMEOUTS.headersTimeoutMs + 2 * SCALED_TIMEOUTS.checkEveryMs + 300),
      );
      let later = proxies.map((p, i) => fdCount(p.pid) - base[i]!);
      for (const until = Date.now() + 8_000; (later[0]! > 2 || later[1]! > 2) && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 100));
        later = proxies.map((p, i) => fdCount(p.pid) - base[i]!);
      }
      expect(later[0], `the shipped proxy freed them (${later.join(", ")} new descriptors)`).toBeLessThanOrEqual(2);
      expect(later[1], "the timeouts alone free the uncapped proxy's too").toBeLessThanOrEqual(2);
      expect(later[2], "control: without the timeouts they stay").toBeGreaterThanOrEqual(N - 2);
      const lines = readLines(proxies[0]!.log);
      const refused = lines.map((l) => JSON.parse(l) as { outcome: string; status: number; suppressed?: number });
      expect(
        refused.filter((r) => r.outcome === "refused").length,
        "the dropped connections are logged, up to the budget",
      ).toBe(EGRESS_LOG_BUDGET.refusedKept.value);
      expect(readFileSync(proxies[0]!.log).length, "within the log's bound").toBeLessThanOrEqual(egressLogBound(0));
    } finally {
      for (const c of clients) c.destroy();
      await Promise.all(proxies.map((p) => p.stop()));
      await up.close();
    }
  }, 90_000);
});
