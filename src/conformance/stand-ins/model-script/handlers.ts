import { getResponse, http, HttpResponse, type RequestHandler } from "msw";
import { MosaicError } from "../../../core/errors.ts";
import { unfilledTemplateVars, type ModelScript } from "./format.ts";
import type { ScriptRecorder } from "./record.ts";
import { resolveReply } from "./resolve.ts";
import { sseEvents, sseStream } from "./sse.ts";

/** Turn handlers and their index, so remainingTurns() can count the unserved ones. */
const TURN_HANDLERS = new WeakMap<RequestHandler, number>();

/**
 * An Anthropic-shaped error that ends the CLI's call at once. Measured on Claude Code 2.1.332: a
 * 500 with `x-should-retry: false` is one request and exit 1 with the message shown; without the
 * header it retries past 40 s; a 404 is retried once and reported as a bad model; a 400 five
 * times. Pi (retries off in its settings) makes one request for each. A retry would also take
 * the next turn and hide the failure behind a later one.
 */
export function anthropicError(status: number, type: string, message: string): Response {
  return HttpResponse.json(
    { type: "error", error: { type, message } },
    { status, headers: { "x-should-retry": "false" } },
  );
}

const served = ({ turns, source }: ModelScript) =>
  turns.length === 0
    ? `${source} has no turns`
    : `${source} has ${turns.length} turn${turns.length === 1 ? "" : "s"}, all served`;
const reason = (e: unknown) => (e instanceof Error ? e.message : String(e));

/**
 * The msw handlers that play a script: one POST to /v1/messages per turn, in order, each
 * `{once: true}`; `HEAD /` (Claude Code's reachability check); and a fallback that answers
 * anything else, a call past the last turn included, with a 500 at once, recorded as a
 * failure. A turn that throws answers a recorded 500.
 */
export function handlersFor(script: ModelScript, recorder: ScriptRecorder): RequestHandler[] {
  const left = unfilledTemplateVars(script)[0];
  if (left)
    throw new MosaicError(
      "unfilled-template-var",
      left.field,
      `{{${left.name}}} was never filled: pass the run's values to fillTemplateVars() (${script.source})`,
    );
  const turns = script.turns.map((reply, turn) => {
    const h = http.post(
      "*/v1/messages",
      async ({ request }) => {
        try {
          const fixed = resolveReply(reply, await request.text());
          recorder.mark(request, { kind: "turn", turn });
          return new HttpResponse(sseStream(sseEvents(fixed, recorder.seqOf(request) || turn + 1)), {
            headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
          });
        } catch (e) {
          const message = `turns[${turn}] of ${script.source} threw: ${reason(e)}`;
          recorder.mark(request, { kind: "handler-threw", turn, message });
          return anthropicError(500, "api_error", `scripted API: ${message}`);
        }
      },
      { once: true },
    );
    TURN_HANDLERS.set(h, turn);
    return h;
  });
  const head = http.head("*/", ({ request }) => {
    recorder.mark(request, { kind: "head" });
    return new HttpResponse(null, { status: 200 });
  });
  const fallback = http.all("*", ({ request }) => {
    const what = `${request.method} ${new URL(request.url).pathname}`;
    const isCall = request.method === "POST" && new URL(request.url).pathname.endsWith("/v1/messages");
    const message = isCall
      ? `no turn left for ${what}: ${served(script)}`
      : `nothing in ${script.source} answers ${what}`;
    recorder.mark(request, { kind: "unmatched", message });
    return anthropicError(500, "api_error", `scripted API: ${message}`);
  });
  return [...turns, head, fallback];
}

/** Turns of these handlers not yet served. */
export function remainingTurns(handlers: readonly RequestHandler[]): number {
  return handlers.filter((h) => TURN_HANDLERS.has(h) && !h.isUsed).length;
}

/**
 * Answers one request through msw's `getResponse`, recording it first. Never leaves a request
 * unanswered: a handler that throws, or no handler matching, gives a recorded 500.
 */
export async function respond(
  handlers: readonly RequestHandler[],
  request: Request,
  recorder: ScriptRecorder,
): Promise<Response> {
  const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.clone().text();
  const record = recorder.record(request, body);
  let response: Response | undefined;
  try {
    response = await getResponse([...handlers], request);
  } catch (e) {
    const message = `a handler threw on ${request.method} ${record.url}: ${reason(e)}`;
    recorder.mark(request, { kind: "handler-threw", message });
    response = anthropicError(500, "api_error", `scripted API: ${message}`);
  }
  if (response === undefined) {
    const message = `no handler answers ${request.method} ${record.url}`;
    recorder.mark(request, { kind: "unmatched", message });
    response = anthropicError(500, "api_error", `scripted API: ${message}`);
  }
  recorder.finish(record, response.status);
  return response;
}
