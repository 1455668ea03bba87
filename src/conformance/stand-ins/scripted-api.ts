import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { RequestHandler } from "msw";
import type { ModelScript } from "./model-script/format.ts";
import { handlersFor, remainingTurns, respond } from "./model-script/handlers.ts";
import { ScriptRecorder, type RecordedRequest, type ScriptFailure } from "./model-script/record.ts";

export { toolResultsIn } from "./model-script/resolve.ts";

export interface ScriptedApi {
  /** `http://127.0.0.1:<port>`: ANTHROPIC_BASE_URL for Claude Code, `baseUrl` in Pi's models.json. */
  readonly url: string;
  requests(): readonly RecordedRequest[];
  /** Bodies of every POST /v1/messages, in order, answered or not: what the model was shown. */
  messageBodies(): string[];
  /** Requests the script did not answer: no turn left, no handler, a handler that threw. */
  failures(): ScriptFailure[];
  /** Turns not yet served. */
  remaining(): number;
  /** Whether some request carried `value` in the credential header `header`. */
  credentialSeen(header: string, value: string): boolean;
  /** Serves a new script from its first turn, for one that names paths known only after start. */
  replaceScript(script: ModelScript): void;
  stop(): Promise<void>;
}

export interface ScriptedApiOptions {
  /** The turns to play. Without it (and without handlers) every model call is a failure until replaceScript(). */
  script?: ModelScript;
  /** Handlers of one's own instead of a script's, given the recorder to mark requests with. */
  handlers?: (recorder: ScriptRecorder) => RequestHandler[];
  /** Header names to redact beyond the credential headers. */
  redact?: readonly string[];
  /** Called on each failure as it happens; by default a line on stderr, so a failure is loud while the CLI still runs. */
  onFailure?: (f: ScriptFailure) => void;
}

const EMPTY: ModelScript = { turns: [], source: "(no script yet)" };

const loudly = (f: ScriptFailure) =>
  process.stderr.write(`scripted API failure: request ${f.seq} ${f.method} ${f.url}: ${f.message}\n`);

/**
 * A scripted Anthropic Messages API: a real node:http listener on 127.0.0.1 whose answers come
 * from msw handlers through getResponse, the SSE body piped as it streams.
 */
export async function startScriptedApi(opts: ScriptedApiOptions = {}): Promise<ScriptedApi> {
  if (opts.script && opts.handlers) throw new Error("startScriptedApi: give a script or handlers, not both");
  const recorder = new ScriptRecorder({ redact: opts.redact ?? [], onFailure: opts.onFailure ?? loudly });
  let handlers = opts.handlers ? opts.handlers(recorder) : handlersFor(opts.script ?? EMPTY, recorder);
  const server = createServer((req, res) => void serve(req, res));
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const headers = new Headers();
      for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i]!, req.rawHeaders[i + 1]!);
      const method = req.method ?? "GET";
      const body = method === "GET" || method === "HEAD" ? undefined : Buffer.concat(chunks);
      const response = await respond(
        handlers,
        new Request(new URL(req.url ?? "/", url), { method, headers, body }),
        recorder,
      );
      res.writeHead(response.status, [...response.headers].flat());
      if (response.body === null || method === "HEAD") res.end();
      else await pipeline(Readable.fromWeb(response.body as import("node:stream/web").ReadableStream), res);
    } catch (e) {
      // Past respond() only IO fails (a client gone mid-stream); answer if we still can, never hang.
      process.stderr.write(`scripted API: ${req.method} ${req.url}: ${e instanceof Error ? e.message : String(e)}\n`);
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    }
  }

  return {
    url,
    requests: () => recorder.requests(),
    messageBodies: () =>
      recorder
        .requests()
        .filter((r) => r.method === "POST" && r.url.split("?")[0] === "/v1/messages")
        .map((r) => r.body),
    failures: () => recorder.failures(),
    remaining: () => remainingTurns(handlers),
    credentialSeen: (header, value) => recorder.credentialSeen(header, value),
    replaceScript(script) {
      handlers = handlersFor(script, recorder);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}
