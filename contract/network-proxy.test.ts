// The model proxy as the launcher runs it, in a process of its own on a real Unix socket, in front
// of a real upstream HTTP server on 127.0.0.1: each refused request never reaches the upstream; the
// body bound stops an oversize body at the bound without buffering it; the bodies a session holds
// at once are bounded; the egress log stays within its budget (connections: network-proxy-idle.test.ts).
// Each refusal has its positive control: the same request through a proxy whose check is
// removed on purpose (every grant, or a raised bound) reaches the upstream.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { EGRESS_LOG_BUDGET, egressLogBound } from "../src/core/network/egress-log.ts";
import { MODEL_GRANTS, type ModelGrant } from "../src/core/network/grants.ts";
import { PROXY_LIMITS, type ProxyLimits } from "../src/core/network/proxy-limits.ts";

const MiB = 1024 * 1024;
const CHILD = join(REPO_ROOT, "contract/support/model-proxy-child.ts");
const ALL_GRANTS: ModelGrant[] = MODEL_GRANTS.map((g) => g.grant);
const scratch = makeScratch("proxy-process");
afterAll(() => scratch.remove());

type Seen = { method: string; url: string; headers: IncomingHttpHeaders; bytes: number; body: string };

/** A real upstream on 127.0.0.1 that records each request (bodies over 1 MiB by size and head only). */
async function upstream(): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on("data", (c: Buffer) => {
      bytes += c.length;
      if (bytes <= MiB) chunks.push(c);
    });
    req.on("end", () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        bytes,
        body: Buffer.concat(chunks).toString("utf8").slice(0, MiB),
      });
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

type Proxy = { socket: string; log: string; pid: number; stop: () => Promise<void> };

/** The proxy in its own process, with the shipped options unless a control changes them on purpose. */
async function startProxy(
  name: string,
  upstreamUrl: string,
  over: { grants?: ModelGrant[]; limits?: Partial<ProxyLimits> } = {},
): Promise<Proxy> {
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
    ...over,
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

type Answer = { status: number; body: string } | { status: -1; error: string };

function send(
  socket: string,
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body: string | Buffer = "",
): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request(
      { socketPath: socket, method, path, headers: { ...headers, "content-length": String(Buffer.byteLength(body)) } },
      (res) => {
        let b = "";
        res.on("data", (c: Buffer) => (b += c));
        res.on("end", () => resolve({ status: res.statusCode!, body: b }));
      },
    );
    req.on("error", (e) => resolve({ status: -1, error: e.message }));
    req.end(body);
  });
}

/**
 * Streams head, then `bytes` of filler in 1 MiB chunks, then tail, chunked (no declared length); the
 * answer, or the error, once either comes. With holdBeforeEnd the tail waits for resume().
 */
function sendStream(
  socket: string,
  head: string,
  bytes: number,
  tail: string,
  opts: { holdBeforeEnd?: true } = {},
): { answer: Promise<Answer>; resume: () => void } {
  const req = request({
    socketPath: socket,
    method: "POST",
    path: "/v1/messages",
    headers: { "content-type": "application/json" },
  });
  const answer = new Promise<Answer>((resolve) => {
    req.on("response", (res) => {
      let b = "";
      res.on("data", (c: Buffer) => (b += c));
      res.on("end", () => resolve({ status: res.statusCode!, body: b }));
      res.on("error", () => resolve({ status: res.statusCode!, body: b }));
    });
    req.on("error", (e) => resolve({ status: -1, error: e.message }));
  });
  const chunk = Buffer.alloc(MiB, "a");
  let sent = 0;
  let resume = () => {};
  const held = new Promise<void>((r) => (resume = r));
  const pump = async () => {
    req.write(head);
    while (sent < bytes && !req.destroyed) {
      const n = Math.min(MiB, bytes - sent);
      sent += n;
      if (!req.write(n === MiB ? chunk : chunk.subarray(0, n))) {
        await new Promise<void>((r) => {
          const go = () => {
            req.off("drain", go);
            req.off("close", go);
            r();
          };
          req.on("drain", go);
          req.on("close", go);
        });
      }
    }
    if (opts.holdBeforeEnd) await held;
    if (!req.destroyed) req.end(tail);
  };
  void pump().catch(() => {});
  return { answer, resume };
}

/**
 * The body bounds at a 16th of their figure: the proxy's mechanism is the same at any figure, and the
 * tier does not stream hundreds of MiB. The shipped figures are pinned in network-model.test.ts, and
 * live/model-proxy.test.ts sends a 33 MiB body to the shipped proxy.
 */
const SCALED = {
  bodyBytes: PROXY_LIMITS.bodyBytes.value / 16,
  heldBytes: PROXY_LIMITS.heldBytes.value / 16,
} satisfies Partial<ProxyLimits>;

const CALL = { model: "claude-sonnet-4-5", max_tokens: 8, messages: [{ role: "user", content: "hi" }] };
const json = (v: unknown) => JSON.stringify(v);
const readLines = (f: string) => (existsSync(f) ? readFileSync(f, "utf8").split("\n").filter(Boolean) : []);
const peakRss = (pid: number) =>
  Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? "NaN") * 1024;

/** Requests that would make the provider reach the network for the session, and how the shipped proxy answers each. */
const ATTACKS: ReadonlyArray<{
  name: string;
  headers?: Record<string, string>;
  body: string;
  status: number;
  grant: ModelGrant | null;
  upstreamSees?: string;
}> = [
  {
    name: "mcp_servers",
    body: json({ ...CALL, mcp_servers: [{ type: "url", url: "https://mcp.example.invalid/sse", name: "x" }] }),
    status: 403,
    grant: "mcp-connector",
    upstreamSees: "mcp.example.invalid",
  },
  {
    name: "a web_fetch tool",
    body: json({ ...CALL, tools: [{ type: "web_fetch_20250910", name: "web_fetch" }] }),
    status: 403,
    grant: "web-fetch",
    upstreamSees: "web_fetch_20250910",
  },
  {
    name: "a url image",
    body: json({
      ...CALL,
      messages: [
        { role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.invalid/a.png" } }] },
      ],
    }),
    status: 403,
    grant: "url-sources",
    upstreamSees: "https://example.invalid/a.png",
  },
  {
    name: "a file document",
    body: json({
      ...CALL,
      messages: [{ role: "user", content: [{ type: "document", source: { type: "file", file_id: "file_attack" } }] }],
    }),
    status: 403,
    grant: "file-sources",
    upstreamSees: "file_attack",
  },
  {
    name: "a container_upload",
    body: json({
      ...CALL,
      messages: [{ role: "user", content: [{ type: "container_upload", file_id: "file_upload" }] }],
    }),
    status: 403,
    grant: "code-execution",
    upstreamSees: "container_upload",
  },
  {
    name: "the MCP connector's beta",
    headers: { "anthropic-beta": "claude-code-20250219, mcp-client-2025-11-20" },
    body: json(CALL),
    status: 403,
    grant: "mcp-connector",
  },
  {
    name: "a duplicate tools key, the server tool last",
    body: `{"model":"m","max_tokens":8,"tools":[],"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}]}`,
    status: 403,
    grant: "web-fetch",
    upstreamSees: "web_fetch_20250910",
  },
  { name: "a gzip body", headers: { "content-encoding": "gzip" }, body: json(CALL), status: 415, grant: null },
  { name: "a body that is not JSON", body: "model=m", status: 400, grant: null },
];

describe("the model proxy, in its own process, against a real upstream", () => {
  it("each request that would make the provider fetch is refused and never reaches the upstream; control: with every grant, the upstream receives each", async () => {
    const up = await upstream();
    const shipped = await startProxy("refusals", up.url);
    const open = await startProxy("refusals-granted", up.url, { grants: ALL_GRANTS });
    try {
      for (const a of ATTACKS) {
        const r = await send(
          shipped.socket,
          "POST",
          "/v1/messages?beta=true",
          { "content-type": "application/json", ...a.headers },
          a.body,
        );
        expect(r.status, `${a.name}: refused`).toBe(a.status);
        if ("body" in r)
          expect(JSON.parse(r.body), `${a.name}: an Anthropic-shaped error`).toMatchObject({
            type: "error",
            error: { type: expect.any(String), message: expect.any(String) },
          });
      }
      expect(up.seen, "no refused request reached the upstream").toEqual([]);
      // The duplicate key the other way round: the check reads the last tools (the server tool's
      // absence), and what goes up is what it read, serialised again, never the bytes as sent.
      const smuggle = `{"model":"m","max_tokens":8,"tools":[{"type":"web_fetch_20250910","name":"web_fetch"}],"messages":[{"role":"user","content":"hi"}],"tools":[]}`;
      expect(
        (await send(shipped.socket, "POST", "/v1/messages", { "content-type": "application/json" }, smuggle)).status,
      ).toBe(200);
      expect(
        (
          await send(
            shipped.socket,
            "POST",
            "/v1/messages",
            { "content-type": "application/json", "anthropic-beta": "claude-code-20250219" },
            json(CALL),
          )
        ).status,
        "positive control: a plain call passes",
      ).toBe(200);
      expect(up.seen.length, "the two plain calls went up").toBe(2);
      expect(up.seen[0]!.body, "the upstream got the checked body, not the smuggled bytes").not.toContain("web_fetch");
      expect(JSON.parse(up.seen[0]!.body)).toEqual({
        model: "m",
        max_tokens: 8,
        tools: [],
        messages: [{ role: "user", content: "hi" }],
      });
      const records = readLines(shipped.log).map((l) => JSON.parse(l) as { outcome: string; status: number });
      expect(
        records.map((r) => `${r.outcome} ${r.status}`),
        "every refusal and call is in the log",
      ).toEqual([...ATTACKS.map((a) => `refused ${a.status}`), "allowed 200", "allowed 200"]);

      const before = up.seen.length;
      for (const a of ATTACKS.filter((x) => x.grant !== null)) {
        const r = await send(
          open.socket,
          "POST",
          "/v1/messages?beta=true",
          { "content-type": "application/json", ...a.headers },
          a.body,
        );
        expect(r.status, `control: ${a.name} passes with every grant`).toBe(200);
        const got = up.seen.at(-1)!;
        if (a.upstreamSees !== undefined)
          expect(got.body, `control: the upstream received ${a.name}`).toContain(a.upstreamSees);
        if (a.headers?.["anthropic-beta"] !== undefined)
          expect(got.headers["anthropic-beta"], `control: the upstream received ${a.name}`).toContain(
            "mcp-client-2025-11-20",
          );
      }
      expect(up.seen.length - before).toBe(ATTACKS.filter((x) => x.grant !== null).length);
    } finally {
      await Promise.all([shipped.stop(), open.stop()]);
      await up.close();
    }
  });

  it("a body over the bound gets 413 at the bound, declared or streamed, is never buffered whole and never forwarded; control: with the bound raised, the upstream receives it", async () => {
    const up = await upstream();
    const shipped = await startProxy("size", up.url, { limits: SCALED });
    const raised = await startProxy("size-raised", up.url, {
      limits: { bodyBytes: 2 * SCALED.bodyBytes, heldBytes: 2 * SCALED.heldBytes },
    });
    const head = '{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"';
    const tail = '"}]}';
    try {
      const declared = Buffer.from(head + "a".repeat(SCALED.bodyBytes + MiB / 8) + tail);
      const r1 = await send(shipped.socket, "POST", "/v1/messages", { "content-type": "application/json" }, declared);
      expect(r1.status, "a declared body just over the bound: 413 before it is read").toBe(413);
      const rss0 = peakRss(shipped.pid);
      const r2 = await sendStream(shipped.socket, head, 96 * MiB, tail).answer;
      expect(r2.status, `a streamed 96 MiB body: 413 at the bound (${JSON.stringify(r2)})`).toBe(413);
      const grew = peakRss(shipped.pid) - rss0;
      expect(
        grew,
        `the proxy's peak memory grew by ${grew} bytes: it stopped holding the body at the bound`,
      ).toBeLessThan(SCALED.bodyBytes + 48 * MiB);
      expect(up.seen, "no oversize body reached the upstream").toEqual([]);
      const log = readLines(shipped.log).map((l) => JSON.parse(l) as { status: number; bytesIn: number });
      expect(
        log.map((l) => l.status),
        JSON.stringify(log),
      ).toEqual([413, 413]);
      expect(log[1]!.bytesIn, "the streamed body was read to just past the bound, not to its end").toBeLessThan(
        SCALED.bodyBytes + 2 * MiB,
      );

      const r3 = await send(raised.socket, "POST", "/v1/messages", { "content-type": "application/json" }, declared);
      expect(r3.status, "control: with the bound raised the same body passes").toBe(200);
      expect(
        up.seen.map((s) => s.bytes),
        "control: the upstream received the body over the shipped bound",
      ).toEqual([declared.length]);
    } finally {
      await Promise.all([shipped.stop(), raised.stop()]);
      await up.close();
    }
  }, 60_000);

  it("bodies held at once are bounded per session: a third body being read gets 429 while two of 25/32 of the body bound are held; control: with the bound raised, the third goes up", async () => {
    const up = await upstream();
    const head = '{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"';
    const tail = '"}]}';
    const big = (SCALED.bodyBytes * 25) / 32;
    for (const [name, limits, third] of [
      ["held", SCALED, 429],
      ["held-raised", { ...SCALED, heldBytes: 8 * SCALED.heldBytes }, 200],
    ] as const) {
      const p = await startProxy(name, up.url, { limits });
      const held = [
        sendStream(p.socket, head, big, tail, { holdBeforeEnd: true }),
        sendStream(p.socket, head, big, tail, { holdBeforeEnd: true }),
      ];
      try {
        // Both bodies read to their last byte but one (25/16 of the body bound held at the proxy) before the third starts.
        await new Promise((r) => setTimeout(r, 300));
        const c = await sendStream(p.socket, head, SCALED.bodyBytes / 2, tail).answer;
        expect(c.status, `${name}: the third body (${JSON.stringify(c).slice(0, 200)})`).toBe(third);
      } finally {
        await p.stop();
      }
      for (const h of held) h.resume();
    }
    expect(
      up.seen.map((s) => s.bytes > SCALED.bodyBytes / 2),
      "only the control's third body went up",
    ).toEqual([true]);
    await up.close();
  }, 60_000);

  it("3,000 refusals with 8 KB paths and five model calls: the log keeps every call, 64 refusals and summary lines, within its bound", async () => {
    const up = await upstream();
    const p = await startProxy("log", up.url);
    try {
      const path = "/" + "p".repeat(8_000);
      let done = 0;
      const one = async (i: number) => {
        if (i % 600 === 0)
          expect(
            (await send(p.socket, "POST", "/v1/messages", { "content-type": "application/json" }, json(CALL))).status,
          ).toBe(200);
        expect((await send(p.socket, "GET", `${path}${i}`, {})).status).toBe(403);
        done++;
      };
      for (let i = 0; i < 3_000; i += 20) await Promise.all(Array.from({ length: 20 }, (_, k) => one(i + k)));
      expect(done).toBe(3_000);
    } finally {
      await p.stop();
    }
    const lines = readLines(p.log);
    const parsed = lines.map(
      (l) => JSON.parse(l) as { outcome: string; path?: string; refused?: number; suppressed?: number },
    );
    expect(parsed.filter((r) => r.outcome === "allowed").length, "every model call is recorded").toBe(5);
    expect(up.seen.length).toBe(5);
    expect(parsed.filter((r) => r.outcome === "refused").length, "the first refusals are kept").toBe(
      EGRESS_LOG_BUDGET.refusedKept.value,
    );
    expect(parsed.at(-1), "the closing summary counts all 3,000").toMatchObject({
      outcome: "refused-summary",
      refused: 3_000,
      suppressed: 3_000 - EGRESS_LOG_BUDGET.refusedKept.value,
    });
    for (const l of lines)
      expect(Buffer.byteLength(l), "each line bounded").toBeLessThanOrEqual(EGRESS_LOG_BUDGET.lineBytes.value);
    expect(
      parsed.find((r) => r.outcome === "refused")?.path,
      "positive control: a kept line shows the path, cut",
    ).toMatch(/^\/p{255}…\(\+\d+\)$/);
    const size = readFileSync(p.log).length;
    expect(
      size,
      `the log is ${size} bytes, within egressLogBound(5) = ${egressLogBound(5)}, for 24 MB of paths`,
    ).toBeLessThanOrEqual(egressLogBound(5));
    await up.close();
  }, 30_000);
});
