// The stand-in broker's state machine: pure. One request and the socket it came on in; the next
// state, one response and one record out. A call that fails before it is done returns the very
// state it was given, so "no effect" is checkable as identity.
import {
  badRequestResponse,
  type BrokerRequest,
  type BrokerResponse,
  type ErrorCode,
  type ParsedLine,
  type RequestId,
} from "./protocol.ts";
import { policyOf, type BrokerState, type Capability, type SocketName } from "./store.ts";
import { VERBS, misdirected, type Caller } from "./verbs.ts";

export * from "./store.ts";
export { VERBS } from "./verbs.ts";

/** One call as the broker saw it. `capValid` is true only for a live capability; run and instance are the capability's, even an ended one's. */
export interface StepRecord {
  socket: SocketName;
  id: RequestId | null;
  /** null: the line was not a request. */
  verb: string | null;
  args: Record<string, unknown> | null;
  cap: string | null;
  capValid: boolean;
  run: string | null;
  instance: string | null;
  outcome: "ok" | "error" | "unanswered";
  code?: ErrorCode;
}

export interface StepOutput {
  state: BrokerState;
  response: BrokerResponse;
  record: StepRecord;
}

/** The typed-tool verbs, from the catalog: the default policy permits them all, launch included. */

function recordOf(
  req: BrokerRequest,
  socket: SocketName,
  entry: Capability | undefined,
  outcome: StepRecord["outcome"],
  code?: ErrorCode,
): StepRecord {
  return {
    socket,
    id: req.id,
    verb: req.verb,
    args: req.args,
    cap: req.cap,
    capValid: entry?.status === "live",
    run: entry?.run ?? null,
    instance: entry?.instance ?? null,
    outcome,
    ...(code === undefined ? {} : { code }),
  };
}

/** A call that does nothing: the state given back unchanged, an error, and the attempt recorded. */
function fail(
  state: BrokerState,
  req: BrokerRequest,
  socket: SocketName,
  entry: Capability | undefined,
  code: ErrorCode,
  message: string,
): StepOutput {
  return {
    state,
    response: { id: req.id, ok: false, error: { code, message } },
    record: recordOf(req, socket, entry, "error", code),
  };
}

/**
 * One request. Order: the capability (a forged or stale one learns nothing else), the verb and
 * socket, the claim, the args, the instance's policy, then the verb itself.
 */
export function step(state: BrokerState, req: BrokerRequest, socket: SocketName): StepOutput {
  const entry = state.caps.get(req.cap); // safety: broker-cap-lookup
  // safety: broker-ended-cap
  if (entry === undefined || entry.status === "ended")
    return fail(state, req, socket, entry, "unauthenticated", "not a live capability");
  if (entry.status === "revoked")
    return fail(state, req, socket, entry, "claim-revoked", `the claim on ${entry.instance} was revoked`); // safety: broker-claim-revoked
  const spec = VERBS.get(req.verb);
  // safety: broker-launch-socket-only
  if (spec === undefined || spec.socket !== socket) {
    const w = misdirected(req.verb, socket);
    return fail(state, req, socket, entry, w.code, w.message);
  }
  const claim = state.claims.get(entry.instance);
  const claimed = claim !== undefined && claim.run === entry.run;
  if (req.verb !== "role.claim" && !claimed)
    return fail(
      state,
      req,
      socket,
      entry,
      "not-claimed",
      `${entry.instance} is not claimed by this capability's run; call role.claim first`,
    ); // safety: broker-not-claimed
  const caller: Caller = { cap: req.cap, run: entry.run, instance: entry.instance, business: entry.business };
  const parsed = spec.parse(req.args);
  if ("invalid" in parsed) return fail(state, req, socket, entry, "refused", parsed.invalid);
  if (spec.governed(parsed.args) && !policyOf(state, entry.instance).permitted.includes(req.verb)) {
    return fail(
      state,
      req,
      socket,
      entry,
      "refused",
      `${req.verb} is not permitted for ${entry.instance} (the broker's policy)`,
    );
  }
  const out = spec.exec(state, caller, parsed.args);
  if ("refuse" in out) return fail(state, req, socket, entry, "refused", out.refuse);
  return {
    state: out.state,
    response: { id: req.id, ok: true, result: out.result },
    record: recordOf(req, socket, entry, "ok"),
  };
}

/** One parsed line: a request goes to step(); a line that is not one gets bad-request and changes nothing. */
export function handleLine(state: BrokerState, line: ParsedLine, socket: SocketName): StepOutput {
  if (line.kind === "request") return step(state, line.request, socket);
  return {
    state,
    response: badRequestResponse(line),
    record: {
      socket,
      id: line.id,
      verb: null,
      args: null,
      cap: null,
      capValid: false,
      run: null,
      instance: null,
      outcome: "error",
      code: "bad-request",
    },
  };
}

/** The record of a line an unresponsive broker read and never answered: nothing is done. */
export function recordUnanswered(state: BrokerState, line: ParsedLine, socket: SocketName): StepRecord {
  if (line.kind === "bad")
    return {
      socket,
      id: line.id,
      verb: null,
      args: null,
      cap: null,
      capValid: false,
      run: null,
      instance: null,
      outcome: "unanswered",
    };
  return recordOf(line.request, socket, state.caps.get(line.request.cap), "unanswered");
}
