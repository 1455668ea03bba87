import { mkdirSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { scriptOf } from "../../src/conformance/stand-ins/model-script/format.ts";
import { makeScratch } from "../../src/conformance/worlds/scratch.ts";
import { startScriptedApi } from "../../src/conformance/stand-ins/scripted-api.ts";
import { serveModelProxy } from "../../src/host/model-proxy.ts";

const N = 200;
const BODY = JSON.stringify({
  model: "claude-sonnet-4-5",
  max_tokens: 8,
  stream: true,
  messages: [{ role: "user", content: "hi" }],
});

/** One POST /v1/messages, read to its end; milliseconds. */
function post(target: { url: string } | { socketPath: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const where =
      "url" in target
        ? { host: "127.0.0.1", port: Number(new URL(target.url).port) }
        : { socketPath: target.socketPath };
    const req = request(
      {
        ...where,
        path: "/v1/messages",
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "placeholder" },
      },
      (res) => {
        res.resume();
        res.on("end", () =>
          res.statusCode === 200 ? resolve(performance.now() - t0) : reject(new Error(`status ${res.statusCode}`)),
        );
      },
    );
    req.on("error", reject);
    req.end(BODY);
  });
}

/** Milliseconds from serveModelProxy() to its socket listening, and to its close(), over `n` proxies one after another. */
async function starts(dir: string, upstream: string, n: number): Promise<{ start: number[]; close: number[] }> {
  const start: number[] = [];
  const close: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const p = serveModelProxy({
      socket: join(dir, `s${i}.sock`),
      upstream,
      credential: { header: "x-api-key", value: "stand-in-bench-key" },
      mode: "model-only",
      egressLog: join(dir, `s${i}.jsonl`),
    });
    await p.listening;
    const t1 = performance.now();
    await p.close();
    start.push(t1 - t0);
    close.push(performance.now() - t1);
  }
  return { start, close };
}

/**
 * The model proxy's added latency: the same request to the scripted API, direct and through the
 * proxy's socket, interleaved; and what starting and closing a session's proxy costs.
 */
export async function run(): Promise<void> {
  const scratch = makeScratch("bench-network");
  const api = await startScriptedApi({
    script: scriptOf(Array.from({ length: 2 * N + 20 }, () => ({ text: "ok" }))),
    onFailure: () => {},
  });
  const dir = join(scratch.root, "p");
  mkdirSync(dir);
  const socketPath = join(dir, "model.sock");
  const proxy = serveModelProxy({
    socket: socketPath,
    upstream: api.url,
    credential: { header: "x-api-key", value: "stand-in-bench-key" },
    mode: "model-only",
    egressLog: join(dir, "egress.jsonl"),
  });
  await proxy.listening;
  try {
    for (let i = 0; i < 10; i++) await post({ url: api.url }), await post({ socketPath });
    const direct: number[] = [];
    const proxied: number[] = [];
    for (let i = 0; i < N; i++) {
      direct.push(await post({ url: api.url }));
      proxied.push(await post({ socketPath }));
    }
    const q = (xs: number[], p: number) =>
      [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
    console.log(
      `POST /v1/messages to the scripted API, ${N} each, interleaved: direct median ${q(direct, 0.5).toFixed(2)} ms p95 ${q(direct, 0.95).toFixed(2)} ms; through the proxy median ${q(proxied, 0.5).toFixed(2)} ms p95 ${q(proxied, 0.95).toFixed(2)} ms`,
    );
    console.log(
      `the proxy adds ${(q(proxied, 0.5) - q(direct, 0.5)).toFixed(2)} ms at the median, ${(q(proxied, 0.95) - q(direct, 0.95)).toFixed(2)} ms at p95 (${(q(proxied, 0.5) / q(direct, 0.5)).toFixed(2)}x)`,
    );
    const s = await starts(dir, api.url, 20);
    console.log(
      `a session's proxy, 20 one after another: start to listening median ${q(s.start, 0.5).toFixed(2)} ms p95 ${q(s.start, 0.95).toFixed(2)} ms; close median ${q(s.close, 0.5).toFixed(2)} ms p95 ${q(s.close, 0.95).toFixed(2)} ms`,
    );
  } finally {
    await proxy.close();
    await api.stop();
    scratch.remove();
  }
}
