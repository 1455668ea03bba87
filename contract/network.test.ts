// The network's one way out (core/network, host/model-proxy.ts): what the proxy forwards, what the
// session holds instead of its credential, and the proxy itself on a real Unix socket against a
// real upstream on 127.0.0.1.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer, request, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import {
  DROPPED_HEADERS,
  EGRESS_ALLOW,
  MODEL_URL,
  NETWORK_MODES,
  decideEgress,
  egressErrorBody,
  upstreamHeaders,
  type EgressRecord,
} from "../src/core/network/egress.ts";
import {
  CREDENTIAL_PLACEHOLDER,
  placeholderEnv,
  upstreamCredential,
  upstreamUrl,
} from "../src/core/network/placeholder.ts";
import { SESSION_CREDENTIALS } from "../src/core/session/credentials.ts";
import { serveSweptProxy } from "./support/swept-proxy.ts";
import { STAND_IN, loadCases } from "./support/launch-cases.ts";

/** Requests a session might send, and what the proxy must do with each. */
const EGRESS_CASES: ReadonlyArray<[method: string, target: string, forward: boolean]> = [
  ["POST", "/v1/messages", true],
  ["POST", "/v1/messages?beta=true", true],
  ["HEAD", "/", true],
  ["GET", "/v1/messages", false],
  ["GET", "/v1/models", false],
  ["POST", "/v1/files", false],
  ["POST", "/v1/messages/batches", false],
  ["POST", "/v1/messages/../files", false],
  ["POST", "/v1/%6Dessages", false],
  ["POST", "//v1/messages", false],
  ["POST", "http://api.anthropic.com/v1/messages", false],
  ["POST", "/v1/messages#x", false],
  ["CONNECT", "api.anthropic.com:443", false],
  ["GET", "/", false],
];

describe("decideEgress", () => {
  it("model-only forwards exactly the table's requests, compared before any decoding", async () => {
    const lines: string[] = [];
    for (const [method, target, forward] of EGRESS_CASES) {
      const d = decideEgress("model-only", method, target);
      expect(d.kind, `${method} ${target}`).toBe(forward ? "forward" : "refuse");
      lines.push(
        `${method} ${target} → ${d.kind === "forward" ? `forward: ${d.why}` : `refuse ${d.status}: ${d.message}`}`,
      );
    }
    await matchGolden(
      "network",
      "egress-decisions",
      "txt",
      "decideEgress in model-only mode: what the session's proxy forwards",
      lines.join("\n"),
    );
  });
  it("none refuses even the model", () => {
    for (const [method, target] of EGRESS_CASES)
      expect(decideEgress("none", method, target).kind, `${method} ${target}`).toBe("refuse");
  });
  it("the table holds only the model call and the reachability check", async () => {
    expect(EGRESS_ALLOW.map((r) => `${r.method} ${r.path}`)).toEqual(["POST /v1/messages", "HEAD /"]);
    await matchGolden(
      "network",
      "egress-allow",
      "txt",
      "EGRESS_ALLOW: the only requests the model proxy forwards",
      ["request | why", ...EGRESS_ALLOW.map((r) => `${r.method} ${r.path} | ${r.why}`)].join("\n"),
    );
    expect(
      NETWORK_MODES.map((m) => m.mode),
      "no mode opens the network",
    ).toEqual(["model-only", "none"]);
    await matchGolden(
      "network",
      "network-modes",
      "txt",
      "NETWORK_MODES: what the policy's network field may say",
      ["mode | why", ...NETWORK_MODES.map((m) => `${m.mode} | ${m.why}`)].join("\n"),
    );
  });
  it("a refusal is shaped as the Anthropic API shapes its errors", () => {
    const d = decideEgress("model-only", "GET", "/v1/models");
    if (d.kind !== "refuse") throw new Error("expected a refusal");
    expect(JSON.parse(egressErrorBody(d))).toEqual({
      type: "error",
      error: { type: "permission_error", message: d.message },
    });
  });
});

describe("the credential stays on the host", () => {
  const real = `stand-in-real-${randomUUID()}`;
  it("upstreamHeaders drops every credential the session sent and adds the real one", () => {
    const incoming = {
      "x-api-key": CREDENTIAL_PLACEHOLDER,
      authorization: "Bearer found-in-a-file",
      "proxy-authorization": "Basic x",
      cookie: "a=b",
      host: "127.0.0.1:8787",
      "content-type": "application/json",
      connection: "keep-alive",
    };
    const key = upstreamHeaders(incoming, { header: "x-api-key", value: real }, "api.example:443");
    expect(key).toEqual({ "content-type": "application/json", host: "api.example:443", "x-api-key": real });
    const bearer = upstreamHeaders(incoming, { header: "authorization", value: real }, "api.example:443");
    expect(bearer, "the session's x-api-key does not pass beside the real bearer token").toEqual({
      "content-type": "application/json",
      host: "api.example:443",
      authorization: `Bearer ${real}`,
    });
    expect(JSON.stringify([key, bearer])).not.toContain(CREDENTIAL_PLACEHOLDER);
    for (const h of ["x-api-key", "authorization", "proxy-authorization", "cookie"])
      expect(
        DROPPED_HEADERS.map((d) => d.name),
        h,
      ).toContain(h);
  });
  it("upstreamCredential reads the launch's set: a key as x-api-key, a token as a bearer", () => {
    expect(upstreamCredential("api-key", { ANTHROPIC_API_KEY: real })).toEqual({ header: "x-api-key", value: real });
    expect(
      upstreamCredential("proxy", { ANTHROPIC_AUTH_TOKEN: real, ANTHROPIC_BASE_URL: "http://127.0.0.1:9" }),
    ).toEqual({ header: "authorization", value: real });
    expect(upstreamCredential("oauth", { CLAUDE_CODE_OAUTH_TOKEN: real })).toEqual({
      header: "authorization",
      value: real,
    });
    expect(upstreamCredential("api-key", {}), "no credential: none to add").toBeNull();
    expect(upstreamUrl({ ANTHROPIC_BASE_URL: "http://127.0.0.1:9" })).toBe("http://127.0.0.1:9");
    expect(upstreamUrl({})).toBe("https://api.anthropic.com");
  });
  it("placeholderEnv gives each set the placeholder and the in-sandbox model URL, never a value", () => {
    for (const set of SESSION_CREDENTIALS) {
      const env = placeholderEnv(set.label, MODEL_URL);
      expect(env.ANTHROPIC_BASE_URL, set.label).toBe(MODEL_URL);
      const values = Object.entries(env)
        .filter(([k]) => k !== "ANTHROPIC_BASE_URL")
        .map(([, v]) => v);
      expect(values, set.label).toEqual([CREDENTIAL_PLACEHOLDER]);
    }
  });
  it("no planned session carries a host credential value: the adapter's env and every bundle file hold the placeholder", () => {
    let planned = 0;
    for (const c of loadCases()) {
      const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
      if (d.kind !== "launch") continue;
      planned++;
      const env = d.plan.adapter.env;
      for (const [k, v] of Object.entries(env)) expect(v, `${c.name}: ${k}`).not.toBe(STAND_IN);
      expect(JSON.stringify(d.plan.bundle), `${c.name}: the bundle`).not.toContain(STAND_IN);
      expect(env.ANTHROPIC_BASE_URL, `${c.name}: the model URL is the in-sandbox port`).toBe(MODEL_URL);
      expect(Object.values(env), `${c.name}: the placeholder stands in`).toContain(CREDENTIAL_PLACEHOLDER);
      if (d.plan.harness === "pi") {
        const models = JSON.parse(d.plan.bundle["models.json"] ?? "null") as {
          providers: Record<string, { baseUrl: string; apiKey: string }>;
        } | null;
        expect(models, `${c.name}: Pi's models.json is a bundle file`).not.toBeNull();
        for (const p of Object.values(models!.providers))
          expect(p, c.name).toEqual({ baseUrl: MODEL_URL, apiKey: CREDENTIAL_PLACEHOLDER });
      }
    }
    expect(planned, "positive control: the examples plan both harnesses").toBeGreaterThanOrEqual(3);
  });
});

describe("the model proxy on a real socket", () => {
  const scratch = makeScratch("proxy");
  afterAll(() => scratch.remove());
  const real = `stand-in-real-${randomUUID()}`;

  type Seen = { method: string; url: string; headers: IncomingHttpHeaders; body: string };
  async function upstream(): Promise<{ url: string; seen: Seen[]; server: Server }> {
    const seen: Seen[] = [];
    const server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c));
      req.on("end", () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: true }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server };
  }

  function send(
    socket: string,
    method: string,
    path: string,
    headers: Record<string, string>,
    body = "",
  ): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = request({ socketPath: socket, method, path, headers }, (res) => {
        let b = "";
        res.on("data", (c: Buffer) => (b += c));
        res.on("end", () => resolve({ status: res.statusCode!, body: b }));
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  /** The smallest body the proxy's body check passes: a plain model call. */
  const CALL = '{"model":"m","max_tokens":8,"messages":[{"role":"user","content":"hi"}]}';
  const readLog = (f: string): EgressRecord[] =>
    readFileSync(f, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as EgressRecord);

  it("forwards the model call with the real key in place of the placeholder, refuses the rest, and logs both", async () => {
    const up = await upstream();
    const dir = join(scratch.root, "a");
    mkdirSync(dir);
    const socket = join(dir, "model.sock");
    const log = join(dir, "egress.jsonl");
    const proxy = serveSweptProxy({
      socket,
      upstream: up.url,
      credential: { header: "x-api-key", value: real },
      mode: "model-only",
      egressLog: log,
    });
    await proxy.listening;
    try {
      const ok = await send(
        socket,
        "POST",
        "/v1/messages?beta=true",
        { "x-api-key": CREDENTIAL_PLACEHOLDER, "content-type": "application/json" },
        CALL,
      );
      expect(ok.status, "positive control: the model call goes through").toBe(200);
      expect(up.seen.map((s) => `${s.method} ${s.url}`)).toEqual(["POST /v1/messages?beta=true"]);
      expect(up.seen[0]!.headers["x-api-key"], "upstream gets the real key").toBe(real);
      expect(JSON.stringify(up.seen), "never the placeholder").not.toContain(CREDENTIAL_PLACEHOLDER);
      expect(up.seen[0]!.body).toBe(CALL);

      for (const [method, path] of [
        ["GET", "/v1/models"],
        ["POST", "/v1/files"],
        ["POST", "/v1/messages/../files"],
      ] as const) {
        const r = await send(
          socket,
          method,
          path,
          { "x-api-key": CREDENTIAL_PLACEHOLDER },
          method === "POST" ? "{}" : "",
        );
        expect(r.status, `${method} ${path}`).toBe(403);
        expect(JSON.parse(r.body).error.type, `${method} ${path}`).toBe("permission_error");
      }
      expect(up.seen.length, "no refused request reached upstream").toBe(1);
      const records = readLog(log);
      expect(records.map((r) => `${r.outcome} ${r.method} ${r.path} ${r.status}`)).toEqual([
        "allowed POST /v1/messages 200",
        "refused GET /v1/models 403",
        "refused POST /v1/files 403",
        "refused POST /v1/messages/../files 403",
      ]);
      expect(records[0]!.bytesIn).toBe(CALL.length);
      expect(records[0]!.bytesOut).toBe(JSON.stringify({ ok: true }).length);
      expect(readFileSync(log, "utf8"), "the log holds no credential").not.toContain(real);
    } finally {
      await proxy.close();
      up.server.close();
    }
  });
  it("a token set goes up as a bearer, and the session's own key does not pass beside it", async () => {
    const up = await upstream();
    const dir = join(scratch.root, "b");
    mkdirSync(dir);
    const socket = join(dir, "model.sock");
    const proxy = serveSweptProxy({
      socket,
      upstream: up.url,
      credential: { header: "authorization", value: real },
      mode: "model-only",
      egressLog: join(dir, "egress.jsonl"),
    });
    await proxy.listening;
    try {
      await send(
        socket,
        "POST",
        "/v1/messages",
        { "x-api-key": "a-key-the-session-found", authorization: `Bearer ${CREDENTIAL_PLACEHOLDER}` },
        CALL,
      );
      expect(up.seen[0]!.headers.authorization).toBe(`Bearer ${real}`);
      expect(up.seen[0]!.headers["x-api-key"]).toBeUndefined();
    } finally {
      await proxy.close();
      up.server.close();
    }
  });
  it("network none refuses the model call too, and a host with no credential sends nothing upstream", async () => {
    const up = await upstream();
    for (const [name, mode, credential] of [
      ["none", "none", { header: "x-api-key", value: real }],
      ["nocred", "model-only", null],
    ] as const) {
      const dir = join(scratch.root, name);
      mkdirSync(dir);
      const socket = join(dir, "model.sock");
      const proxy = serveSweptProxy({
        socket,
        upstream: up.url,
        credential,
        mode,
        egressLog: join(dir, "egress.jsonl"),
      });
      await proxy.listening;
      try {
        const r = await send(socket, "POST", "/v1/messages", {}, CALL);
        expect(r.status, name).toBeGreaterThanOrEqual(400);
        expect(
          readLog(join(dir, "egress.jsonl")).map((x) => x.outcome),
          name,
        ).toEqual(["refused"]);
      } finally {
        await proxy.close();
      }
    }
    expect(up.seen, "nothing reached upstream").toEqual([]);
    up.server.close();
    expect(existsSync(join(scratch.root, "none", "model.sock")), "the socket is gone with the proxy").toBe(false);
  });
});
