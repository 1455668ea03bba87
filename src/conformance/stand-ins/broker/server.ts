// The stand-in broker's shell: two Unix sockets around the pure state machine (state.ts). Every
// line read is handled in order and recorded; every response is one line.
import { randomBytes } from "node:crypto";
import { chmodSync, chownSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { MosaicError } from "../../../core/errors.ts";
import { MAX_SOCKET_PATH_BYTES } from "../../../core/paths.ts";
import { newFramer, parseFrame, pushChunk, renderResponse } from "./protocol.ts";
import * as core from "./state.ts";
import type { BrokerState, InstancePolicy, MessageKind, SocketName, StepRecord, StoredMessage } from "./state.ts";

/** The caller's own sessions connect as the caller; a root caller's, each its own uid, through their shared group. */
export const SOCKET_MODE = 0o600;
export const SESSIONS_SOCKET_MODE = 0o660;

export type CallRecord = StepRecord & { at: string };

export interface StandInBroker {
  brokerSocket: string;
  launchSocket: string;
  /** Binds a fresh capability (32 random bytes, hex) to one run and one instance. */
  issueCapability(binding: { run: string; instance: string; business?: string }): string;
  /** Voids every capability of the run; its claims go. */
  endRun(run: string): void;
  /** Revokes the instance's live claim; false when it had none. */
  revokeClaim(instance: string): boolean;
  /** Queues a message for the instance, as from `from`; returns its id. */
  deliver(instance: string, message: { from: string; body: string; kind?: MessageKind; replyTo?: string }): string;
  /** Every message addressed to the instance, read or not, in the order sent. */
  sentTo(instance: string): StoredMessage[];
  /** Every call so far, in the order read, including bad lines and calls that failed. */
  records(): CallRecord[];
  /** Connections accepted on each socket so far, whether or not a line was read from them. */
  connectionCounts(): Record<SocketName, number>;
  setPolicy(instance: string, policy: Partial<InstancePolicy>): void;
  /** On: connections are accepted and requests read (recorded as unanswered) but never answered or done. */
  setUnresponsive(on: boolean): void;
  /** The current state (immutable): tasks, decisions, launches, claims. */
  state(): BrokerState;
  /** Closes every connection and both servers, and removes the socket files. */
  stop(): Promise<void>;
}

function socketPath(dir: string, name: string): string {
  const p = join(dir, name);
  if (Buffer.byteLength(p) > MAX_SOCKET_PATH_BYTES) {
    throw new MosaicError(
      "socket-path-too-long",
      "dir",
      `${p} is ${Buffer.byteLength(p)} bytes; a Unix socket path holds ${MAX_SOCKET_PATH_BYTES} (use a shorter directory, e.g. makeScratch())`,
    );
  }
  return p;
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(path, () => {
      server.off("error", fail);
      ok();
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((ok) => (server.listening ? server.close(() => ok()) : ok()));
}

/**
 * Starts the broker with `broker.sock` and `launch.sock` in `dir` (which must be short: 107 bytes
 * per path). A root host's sessions run each as a uid of its own in one group (`sessions`): the
 * sockets are that group's to connect to (0660); nobody else can.
 */
/** What the broker's connections and its handle share: its state, the record of calls, the open connections. */
type Held = {
  state: BrokerState;
  records: CallRecord[];
  connections: Set<Socket>;
  accepted: Record<SocketName, number>;
  unresponsive: boolean;
  mint: (() => string) | null;
};

export async function startBroker(opts: {
  dir: string;
  sessions?: { uid: number; gid: number } | null;
  /** Makes each capability instead of 32 random bytes: a canary a memory-reading attack can look for. */
  mintCapability?: () => string;
}): Promise<StandInBroker> {
  const brokerSocket = socketPath(opts.dir, "broker.sock");
  const launchSocket = socketPath(opts.dir, "launch.sock");
  const held: Held = {
    state: core.newBrokerState(),
    records: [],
    connections: new Set(),
    accepted: { broker: 0, launch: 0 },
    unresponsive: false,
    mint: opts.mintCapability ?? null,
  };
  const brokerServer = createServer(serveConnection(held, "broker"));
  const launchServer = createServer(serveConnection(held, "launch"));
  await listen(brokerServer, brokerSocket);
  try {
    await listen(launchServer, launchSocket);
    for (const p of [brokerSocket, launchSocket]) {
      chmodSync(p, opts.sessions ? SESSIONS_SOCKET_MODE : SOCKET_MODE);
      // Owned by the broker, reachable by the sessions' group and nobody else.
      if (opts.sessions) chownSync(p, process.getuid?.() ?? 0, opts.sessions.gid);
    }
  } catch (e) {
    await Promise.all([close(brokerServer), close(launchServer)]);
    rmSync(brokerSocket, { force: true });
    throw e;
  }
  let stopped: Promise<void> | undefined;
  const stop = () => {
    stopped ??= (async () => {
      for (const c of held.connections) c.destroy();
      await Promise.all([close(brokerServer), close(launchServer)]);
      rmSync(brokerSocket, { force: true });
      rmSync(launchSocket, { force: true });
    })();
    return stopped;
  };
  return { brokerSocket, launchSocket, ...brokerControls(held), stop };
}

/** One connection on one socket: each framed line handled in order, each answer written back. */
function serveConnection(held: Held, name: SocketName): (conn: Socket) => void {
  return (conn) => {
    held.connections.add(conn);
    held.accepted[name] += 1;
    conn.on("close", () => held.connections.delete(conn));
    // A peer that goes away mid-line or mid-response is fine: nothing to answer.
    conn.on("error", () => {});
    conn.on("drain", () => conn.resume());
    let framer = newFramer();
    let closing = false;
    conn.on("data", (chunk: Buffer) => {
      if (closing) return;
      const r = pushChunk(framer, chunk);
      framer = r.framer;
      for (const frame of r.frames) {
        const line = parseFrame(frame, framer.max);
        if (line === null) continue;
        const at = new Date().toISOString();
        if (held.unresponsive) {
          held.records.push({ at, ...core.recordUnanswered(held.state, line, name) });
          continue;
        }
        const out = core.handleLine(held.state, line, name);
        held.state = out.state;
        held.records.push({ at, ...out.record });
        // A request read is done even when its peer has gone; only the answer is lost.
        if (conn.writable && !conn.write(renderResponse(out.response))) conn.pause();
        // After an over-long line the rest of the stream is suspect: answer, then close.
        if (frame.kind === "too-long") {
          closing = true;
          conn.end();
          return;
        }
      }
    });
  };
}

/** What a test does to the broker from the host side, each a step of the pure state. */
function brokerControls(held: Held): Omit<StandInBroker, "brokerSocket" | "launchSocket" | "stop"> {
  return {
    issueCapability: (binding) => {
      const r =
        held.mint !== null
          ? core.bindCapability(held.state, binding, held.mint())
          : core.issueCapability(held.state, binding, randomBytes(32));
      held.state = r.state;
      return r.cap;
    },
    endRun: (run) => {
      held.state = core.endRun(held.state, run);
    },
    revokeClaim: (instance) => {
      const r = core.revokeClaim(held.state, instance);
      held.state = r.state;
      return r.revoked;
    },
    deliver: (instance, m) => {
      const r = core.deliver(held.state, instance, m);
      held.state = r.state;
      return r.id;
    },
    sentTo: (instance) => core.sentTo(held.state, instance),
    records: () => [...held.records],
    connectionCounts: () => ({ ...held.accepted }),
    setPolicy: (instance, policy) => {
      held.state = core.setPolicy(held.state, instance, policy);
    },
    setUnresponsive: (on) => {
      held.unresponsive = on;
    },
    state: () => held.state,
  };
}
