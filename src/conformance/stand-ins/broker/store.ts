// The stand-in broker's state and the host side's operations on it: pure, immutable values.
import { MosaicError } from "../../../core/errors.ts";
import { TOOL_CATALOG } from "../../../core/tools/catalog.ts";

export type SocketName = "broker" | "launch";

/** live: usable; revoked: its claim was revoked (claim-revoked); ended: its run ended (unauthenticated). */
export type CapStatus = "live" | "revoked" | "ended";

export interface Capability {
  run: string;
  instance: string;
  business: string | null;
  status: CapStatus;
}

export interface Claim {
  run: string;
  cap: string;
}

/** What the broker lets one instance do. `permitted` lists the policy-governed verbs (typed-tool verbs and launch). */
export interface InstancePolicy {
  claim: "allow" | "refuse";
  permitted: readonly string[];
}

export type MessageKind = "message" | "result";

export interface StoredMessage {
  id: string;
  from: string;
  to: string;
  kind: MessageKind;
  body: string;
  replyTo?: string;
  read: boolean;
}

export interface Task {
  id: string;
  business: string | null;
  title: string;
  body: string;
  state: "open" | "closed";
  assignee?: string;
  createdBy: string;
  comments: readonly { id: string; by: string; body: string }[];
}

export interface Decision {
  id: string;
  business: string | null;
  by: string;
  question: string;
  options: readonly string[];
}

export interface Launch {
  by: string;
  run: string;
  instance: string;
  message: string;
}

export interface BrokerState {
  caps: ReadonlyMap<string, Capability>;
  endedRuns: ReadonlySet<string>;
  /** At most one per instance: the one live claim. */
  claims: ReadonlyMap<string, Claim>;
  policies: ReadonlyMap<string, InstancePolicy>;
  messages: readonly StoredMessage[];
  tasks: readonly Task[];
  decisions: readonly Decision[];
  launches: readonly Launch[];
  /** The next serial for message, task, comment and decision ids. */
  serial: number;
}

/** The typed-tool verbs, from the catalog: the default policy permits them all, launch included. */
export const CATALOG_VERBS: readonly string[] = TOOL_CATALOG.map((t) => ("broker" in t.via ? t.via.broker : "launch"));

export const DEFAULT_POLICY: InstancePolicy = { claim: "allow", permitted: CATALOG_VERBS };

export function newBrokerState(): BrokerState {
  return {
    caps: new Map(),
    endedRuns: new Set(),
    claims: new Map(),
    policies: new Map(),
    messages: [],
    tasks: [],
    decisions: [],
    launches: [],
    serial: 1,
  };
}

function nonEmpty(field: string, v: string): void {
  if (typeof v !== "string" || v === "") throw new MosaicError("bad-binding", field, "must be a non-empty string");
}

/** Binds a capability to one run and one instance (the host does this when it binds a launch). `random` is 32 bytes. */
export function issueCapability(
  state: BrokerState,
  binding: { run: string; instance: string; business?: string },
  random: Uint8Array,
): { state: BrokerState; cap: string } {
  if (random.length !== 32) throw new MosaicError("bad-binding", "random", `must be 32 bytes, got ${random.length}`);
  return bindCapability(state, binding, Buffer.from(random).toString("hex"));
}

/**
 * Binds a given capability string to one run and one instance: a test that must find the
 * capability in a process's memory mints one it can recognise (a canary).
 */
export function bindCapability(
  state: BrokerState,
  binding: { run: string; instance: string; business?: string },
  cap: string,
): { state: BrokerState; cap: string } {
  nonEmpty("run", binding.run);
  nonEmpty("instance", binding.instance);
  nonEmpty("cap", cap);
  if (state.endedRuns.has(binding.run))
    throw new MosaicError("run-ended", "run", `run ${binding.run} has ended; its capabilities stay void`);
  if (state.caps.has(cap)) throw new MosaicError("bad-binding", "random", "this capability was issued before");
  const caps = new Map(state.caps).set(cap, {
    run: binding.run,
    instance: binding.instance,
    business: binding.business ?? null,
    status: "live",
  });
  return { state: { ...state, caps }, cap };
}

/** Voids every capability of the run and drops its claims; a later call with one gets unauthenticated. */
export function endRun(state: BrokerState, run: string): BrokerState {
  const caps = new Map<string, Capability>();
  for (const [k, c] of state.caps) caps.set(k, c.run === run ? { ...c, status: "ended" } : c); // safety: broker-end-run-voids
  const claims = new Map([...state.claims].filter(([, c]) => c.run !== run));
  return { ...state, caps, claims, endedRuns: new Set(state.endedRuns).add(run) };
}

/** Revokes the instance's live claim: every capability that held it then gets claim-revoked, and the instance is free. */
export function revokeClaim(state: BrokerState, instance: string): { state: BrokerState; revoked: boolean } {
  const claim = state.claims.get(instance);
  if (claim === undefined) return { state, revoked: false };
  const caps = new Map<string, Capability>();
  for (const [k, c] of state.caps)
    caps.set(
      k,
      c.run === claim.run && c.instance === instance && c.status === "live" ? { ...c, status: "revoked" } : c,
    );
  const claims = new Map(state.claims);
  claims.delete(instance);
  return { state: { ...state, caps, claims }, revoked: true };
}

export function setPolicy(state: BrokerState, instance: string, policy: Partial<InstancePolicy>): BrokerState {
  const current = state.policies.get(instance) ?? DEFAULT_POLICY;
  return { ...state, policies: new Map(state.policies).set(instance, { ...current, ...policy }) };
}

export function policyOf(state: BrokerState, instance: string): InstancePolicy {
  return state.policies.get(instance) ?? DEFAULT_POLICY;
}

/** A message from the host side (a person or a role outside the test) into an instance's queue. */
export function deliver(
  state: BrokerState,
  to: string,
  m: { from: string; body: string; kind?: MessageKind; replyTo?: string },
): { state: BrokerState; id: string } {
  const id = `m-${state.serial}`;
  const stored: StoredMessage = {
    id,
    from: m.from,
    to,
    kind: m.kind ?? "message",
    body: m.body,
    ...(m.replyTo === undefined ? {} : { replyTo: m.replyTo }),
    read: false,
  };
  return { state: { ...state, messages: [...state.messages, stored], serial: state.serial + 1 }, id };
}

/** Every message addressed to the instance, read or not, in the order sent. */
export function sentTo(state: BrokerState, instance: string): StoredMessage[] {
  return state.messages.filter((m) => m.to === instance);
}
