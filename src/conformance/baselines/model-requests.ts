// What the pinned Claude Code and Pi actually send the model API, read off real sessions: the
// real launcher and runner in bwrap, each harness's own argv, the launcher's model proxy, and a
// scripted API that answers with thinking blocks, a shell call and file reads (an image, a PDF),
// so every kind of block a turn carries back appears in a later request. The shapes are pinned in
// baselines/model-requests.json; the proxy's tables (core/network/) must admit every one of them.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { http, HttpResponse, type RequestHandler } from "msw";
import { parseSettings } from "../../core/launch/instance.ts";
import type { ResolvedInstance } from "../../core/launch/instance.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { encodeSseEvent, type SseEvent } from "../stand-ins/model-script/sse.ts";
import type { RecordedRequest } from "../stand-ins/model-script/record.ts";
import { ask, launchAndClaim, type RuntimeWorld } from "../worlds/runtime-world.ts";
import { startScriptedApi } from "../stand-ins/scripted-api.ts";

/** One recorded session: a harness, a model and a credential set. */
export type RequestArm = {
  arm: string;
  example: "claude-coder" | "pi-coder";
  model: string;
  credentialSet: "api-key" | "proxy" | "oauth";
  thinking?: string;
};

/**
 * The arms: each credential set Claude Code can hold (oauth adds betas), the models whose requests
 * differ (effort on Opus 4.5, mid-conversation system messages on Opus 4.1, a 1M context), and Pi
 * with thinking on and off.
 */
export const REQUEST_ARMS: readonly RequestArm[] = [
  {
    arm: "claude-code sonnet-4-5 api-key",
    example: "claude-coder",
    model: "claude-sonnet-4-5",
    credentialSet: "api-key",
  },
  { arm: "claude-code sonnet-4-5 proxy", example: "claude-coder", model: "claude-sonnet-4-5", credentialSet: "proxy" },
  { arm: "claude-code sonnet-4-5 oauth", example: "claude-coder", model: "claude-sonnet-4-5", credentialSet: "oauth" },
  {
    arm: "claude-code sonnet-4-5[1m] api-key",
    example: "claude-coder",
    model: "claude-sonnet-4-5[1m]",
    credentialSet: "api-key",
  },
  { arm: "claude-code opus-4-5 api-key", example: "claude-coder", model: "claude-opus-4-5", credentialSet: "api-key" },
  { arm: "claude-code opus-4-1 api-key", example: "claude-coder", model: "claude-opus-4-1", credentialSet: "api-key" },
  {
    arm: "claude-code haiku-4-5 api-key",
    example: "claude-coder",
    model: "claude-haiku-4-5",
    credentialSet: "api-key",
  },
  { arm: "pi sonnet-4-5 thinking medium", example: "pi-coder", model: "claude-sonnet-4-5", credentialSet: "api-key" },
  {
    arm: "pi sonnet-4-5 thinking off",
    example: "pi-coder",
    model: "claude-sonnet-4-5",
    credentialSet: "api-key",
    thinking: "off",
  },
];

/** What one request looked like, without its text: what the proxy's tables are about. */
export type RequestShape = {
  method: string;
  url: string;
  /** anthropic-beta, split at commas, in the order sent. */
  betas: string[];
  /** Top-level fields of the JSON body, in the order sent. */
  fields: string[];
  /** Each tool's `type`, or "(client)" for a tool without one. */
  toolTypes: string[];
  /** `type` of every content block anywhere in messages, system and tool results. */
  blocks: string[];
  /** `<block>:<source.type>` for every image and document. */
  sources: string[];
  roles: string[];
};

export type RecordedArm = {
  arm: string;
  harness: string;
  model: string;
  credentialSet: string;
  ok: boolean;
  requests: RequestShape[];
  lastBody: unknown;
};

// A 1x1 PNG and a one-page PDF: the smallest files each CLI turns into an image and a document block.
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);
const PDF = Buffer.from(
  "%PDF-1.1\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 100 100]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n",
);

type Step = { tool?: { name: string; input: Record<string, unknown> }; text?: string; redacted?: true };

/** One reply's stream: a thinking block with its signature (and a redacted one when asked), then the tool call or the text. */
function replyEvents(step: Step, seq: number): SseEvent[] {
  const usage = { input_tokens: 10, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const blocks: Array<{ start: Record<string, unknown>; deltas: Record<string, unknown>[] }> = [
    {
      start: { type: "thinking", thinking: "", signature: "" },
      deltas: [
        { type: "thinking_delta", thinking: `scripted thinking ${seq}` },
        { type: "signature_delta", signature: `c2lnbmF0dXJl${seq}` },
      ],
    },
    ...(step.redacted ? [{ start: { type: "redacted_thinking", data: `cmVkYWN0ZWQ${seq}` }, deltas: [] }] : []),
    step.tool
      ? {
          start: { type: "tool_use", id: `toolu_recorded_${seq}`, name: step.tool.name, input: {} },
          deltas: [{ type: "input_json_delta", partial_json: JSON.stringify(step.tool.input) }],
        }
      : { start: { type: "text", text: "" }, deltas: [{ type: "text_delta", text: step.text ?? "" }] },
  ];
  return [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: `msg_recorded_${seq}`,
          type: "message",
          role: "assistant",
          model: "scripted",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage,
        },
      },
    },
    ...blocks.flatMap((b, index) => [
      { event: "content_block_start", data: { type: "content_block_start", index, content_block: b.start } },
      ...b.deltas.map((delta) => ({
        event: "content_block_delta",
        data: { type: "content_block_delta", index, delta },
      })),
      { event: "content_block_stop", data: { type: "content_block_stop", index } },
    ]),
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: step.tool ? "tool_use" : "end_turn", stop_sequence: null },
        usage: { output_tokens: 5 },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ];
}

export function stepsFor(arm: RequestArm, ws: string): Step[] {
  const claude = arm.example === "claude-coder";
  const read = (file: string): Step => ({
    tool: claude
      ? { name: "Read", input: { file_path: join(ws, file) } }
      : { name: "read", input: { path: join(ws, file) } },
  });
  return [
    {
      tool: claude
        ? { name: "Bash", input: { command: "echo recorded" } }
        : { name: "bash", input: { command: "echo recorded" } },
      redacted: true,
    },
    read("pic.png"),
    ...(claude ? [read("doc.pdf")] : []),
    { text: "recording-finished" },
  ];
}

export function handlersFor(steps: Step[]): RequestHandler[] {
  let served = 0;
  return [
    http.post("*/v1/messages", () => {
      const step = steps[served++];
      if (step === undefined)
        return HttpResponse.json(
          { type: "error", error: { type: "api_error", message: "no step left" } },
          { status: 500, headers: { "x-should-retry": "false" } },
        );
      const enc = new TextEncoder();
      const events = replyEvents(step, served);
      return new HttpResponse(
        new ReadableStream({
          start(c) {
            for (const e of events) c.enqueue(enc.encode(encodeSseEvent(e)));
            c.close();
          },
        }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }),
    http.head("*/", () => new HttpResponse(null, { status: 200 })),
  ];
}

const uniq = (xs: Iterable<string>) => [...new Set(xs)];
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Every content block in a body: messages, system, tool results, document contents. */
function blocksOf(body: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const walk = (c: unknown) => {
    if (!Array.isArray(c)) return;
    for (const b of c) {
      if (!isObj(b)) continue;
      out.push(b);
      if (b.type === "tool_result" || b.type === "search_result") walk(b.content);
      if (isObj(b.source) && b.source.type === "content") walk(b.source.content);
    }
  };
  walk(body.system);
  for (const m of Array.isArray(body.messages) ? body.messages : []) if (isObj(m)) walk(m.content);
  return out;
}

/** The shape of one recorded request. */
export function shapeOf(r: Pick<RecordedRequest, "method" | "url" | "headers" | "body">): RequestShape {
  let body: Record<string, unknown> = {};
  try {
    const parsed = r.body === "" ? {} : (JSON.parse(r.body) as unknown);
    if (isObj(parsed)) body = parsed;
  } catch {
    // not JSON: the shape says so by having no fields
  }
  const blocks = blocksOf(body);
  return {
    method: r.method,
    url: r.url,
    betas: (r.headers["anthropic-beta"] ?? "")
      .split(",")
      .map((b) => b.trim())
      .filter(Boolean),
    fields: Object.keys(body),
    toolTypes: uniq(
      (Array.isArray(body.tools) ? body.tools : []).map((t) =>
        isObj(t) && typeof t.type === "string" ? t.type : "(client)",
      ),
    ),
    blocks: uniq(blocks.map((b) => String(b.type))),
    sources: uniq(
      blocks
        .filter((b) => isObj(b.source))
        .map((b) => `${String(b.type)}:${String((b.source as Record<string, unknown>).type)}`),
    ),
    roles: uniq((Array.isArray(body.messages) ? body.messages : []).map((m) => (isObj(m) ? String(m.role) : "?"))),
  };
}

/** A body with its words taken out: structure, keys, and every `type` and `role` kept; other strings emptied. */
export function skeletonOf(v: unknown, key = ""): unknown {
  if (Array.isArray(v)) return v.map((x) => skeletonOf(x));
  if (isObj(v)) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, skeletonOf(x, k)]));
  if (typeof v === "string") return key === "type" || key === "role" ? v : "";
  return v;
}

/** Launches one arm's session through the real launcher with the real harness, and records what reached the scripted API. */
export async function recordArm(w: RuntimeWorld, arm: RequestArm, name: string): Promise<RecordedArm> {
  // Filled once the workspace is known; the handlers read the same array.
  const steps: Step[] = [];
  const api = await startScriptedApi({ handlers: () => handlersFor(steps) });
  const base = w.instance(arm.example, name, { instance: name });
  const instance: ResolvedInstance = {
    ...base,
    vars: { ...base.vars, model: arm.model, ...(arm.thinking !== undefined ? { thinking: arm.thinking } : {}) },
  };
  writeFileSync(join(instance.workspace, "pic.png"), PNG);
  writeFileSync(join(instance.workspace, "doc.pdf"), PDF);
  steps.push(...stepsFor(arm, instance.workspace));
  const stand = "stand-in-recording-credential";
  const cred: Record<string, string> =
    arm.credentialSet === "oauth"
      ? { CLAUDE_CODE_OAUTH_TOKEN: stand }
      : arm.credentialSet === "proxy"
        ? { ANTHROPIC_AUTH_TOKEN: stand, ANTHROPIC_BASE_URL: api.url }
        : { ANTHROPIC_API_KEY: stand };
  const settings = parseSettings({ launch: { models: [arm.model] }, plugins: { harness: ["pi", "claude-code"] } });
  const hostEnv = { ...w.hostEnv, ...cred, MOSAIC_CLAUDE_BIN: join(REPO_ROOT, "node_modules/.bin/claude") };
  const s = await launchAndClaim(
    w,
    w.request(instance, { adapter: { kind: "harness" }, modelUpstream: api.url, hostEnv, settings }),
  );
  try {
    const reply = await ask(w, name, "do the task", "pm-test", 90_000);
    const requests = api.requests();
    const last = requests.filter((r) => r.method === "POST").at(-1);
    return {
      arm: arm.arm,
      harness: s.plan.spec.harness,
      model: arm.model,
      credentialSet: arm.credentialSet,
      ok: reply.includes("recording-finished"),
      requests: requests.map(shapeOf),
      lastBody: last === undefined ? null : skeletonOf(JSON.parse(last.body)),
    };
  } finally {
    await s.stop();
    await api.stop();
  }
}

/** The union of every value an arm's requests carried, per kind: the facts the tables must admit. */
export function observedValues(
  arms: readonly Pick<RecordedArm, "arm" | "requests">[],
): Record<"betas" | "fields" | "toolTypes" | "blocks" | "sources" | "roles", Record<string, string[]>> {
  const out = { betas: {}, fields: {}, toolTypes: {}, blocks: {}, sources: {}, roles: {} } as Record<
    "betas" | "fields" | "toolTypes" | "blocks" | "sources" | "roles",
    Record<string, string[]>
  >;
  for (const a of arms) {
    for (const r of a.requests) {
      for (const kind of Object.keys(out) as Array<keyof typeof out>) {
        for (const v of r[kind]) {
          const seen = (out[kind][v] ??= []);
          if (!seen.includes(a.arm)) seen.push(a.arm);
        }
      }
    }
  }
  for (const kind of Object.keys(out) as Array<keyof typeof out>)
    out[kind] = Object.fromEntries(Object.entries(out[kind]).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)));
  return out;
}

/** baselines/model-requests.json: every arm's request shapes, the last body's skeleton, and the union of what was seen. */
export type ModelRequestsBaseline = {
  what: string;
  readWith: string;
  versions: { claudeCode: string; pi: string };
  arms: RecordedArm[];
  observed: ReturnType<typeof observedValues>;
};

export const MODEL_REQUESTS_BASELINE = join(REPO_ROOT, "baselines/model-requests.json");

/** Every arm of REQUEST_ARMS, one session each, in one runtime world. */
export async function recordModelRequests(
  w: RuntimeWorld,
  versions: ModelRequestsBaseline["versions"],
): Promise<ModelRequestsBaseline> {
  const arms: RecordedArm[] = [];
  for (const [i, arm] of REQUEST_ARMS.entries()) arms.push(await recordArm(w, arm, `requests-${i}`));
  return {
    what: "what the pinned Claude Code and Pi send POST /v1/messages, per arm (harness, model, credential set): anthropic-beta values, body fields, tool types, content blocks, source types, roles; the last request's body with its strings emptied",
    readWith:
      "node scripts/record-model-requests.ts: each arm a real session through the launcher and runner in bwrap, its harness's own argv, the launcher's model proxy, against a scripted API whose replies carry thinking and redacted_thinking blocks, a shell call and reads of a PNG and a PDF",
    versions,
    arms,
    observed: observedValues(arms),
  };
}
