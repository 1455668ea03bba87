// The session runner (src/host/runner/main.ts) as a real child process, for the contract tests of
// its edges (contract/runner-main-sweep-*.test.ts): a run directory of its own, a stand-in broker
// on a Unix socket whose answers a test may hold, the tool socket handed over as a listening
// descriptor (fd 3, as the launcher does). contract/support/sweep-child.ts lets the sweep see the
// child. contract/runner-main.test.ts takes its run directory and tool socket from here too.
import { spawn, type StdioOptions } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { connect, type Server } from "node:net";
import { join } from "node:path";
import { planRunnerBounds } from "../../src/core/runner/bounds.ts";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { lineServer } from "./line-server.ts";
import { sweepChild } from "./sweep-child.ts";

export const MAIN = join(REPO_ROOT, "src/host/runner/main.ts");

export type Req = { id: number; cap: string; verb: string; args: Record<string, unknown> };
export type Reply = { ok: true; result: unknown } | { ok: false; error: { code: string; message: string } };
export type Msg = { id: string; from: string; kind: "message" | "result"; body: string };
/** A request's reply, which a test may hold by returning a promise. */
/** A reply, or "silent": the broker reads the request and answers nothing. */
export type BrokerReply = Reply | "silent";
export type Answer = (q: Req, nth: number) => BrokerReply | Promise<Reply>;
export type Child = ReturnType<typeof spawn>;
export type Ended = { code: number | null; signal: string | null; stderr: string };
export type Run = { dir: string; session: Record<string, unknown>; brokerSocket: string; toolSocket: string };

export const ok = (result: unknown = null): Reply => ({ ok: true, result });
export const err = (code: string, message = "no"): Reply => ({ ok: false, error: { code, message } });
export const CAP = '{"cap":"cap-xyz"}\n';

/**
 * The stand-in broker: each request's reply from `answer` ("silent": none, the connection left
 * open), every request kept; `after` runs once a reply is written.
 */
export async function broker(
  path: string,
  answer: Answer,
  after: (q: Req, nth: number) => void = () => {},
): Promise<{ server: Server; seen: Req[] }> {
  const seen: Req[] = [];
  const nthOf = new Map<Req, number>();
  const server = await lineServer<Req>(
    path,
    async (r) => {
      seen.push(r);
      const nth = seen.filter((s) => s.verb === r.verb).length;
      nthOf.set(r, nth);
      const a = await answer(r, nth);
      return a === "silent" ? undefined : { id: r.id, ...a };
    },
    (r) => after(r, nthOf.get(r)!),
  );
  return { server, seen };
}

/** A bound Unix socket the runner inherits as fd 3 and listens on (the launcher's tool socket). */
export function boundSocket(path: string): { fd: number; close(): void } {
  const { Pipe, constants } = (
    process as unknown as {
      binding(n: "pipe_wrap"): {
        Pipe: new (t: number) => { bind(p: string): number; fd: number; close(): void };
        constants: { SERVER: number };
      };
    }
  ).binding("pipe_wrap");
  const p = new Pipe(constants.SERVER);
  if (p.bind(path) !== 0) throw new Error(`could not bind ${path}`);
  return { fd: p.fd, close: () => p.close() };
}

/** A run directory under `root` with a session.json; `over` replaces any of its fields. */
export function runDir(root: string, over: Record<string, unknown> = {}): Run {
  const dir = mkdtempSync(join(root, "r"));
  mkdirSync(join(dir, "turns"));
  const brokerSocket = join(dir, "b.sock");
  const toolSocket = join(dir, "t.sock");
  const session = {
    version: 1,
    business: "acme",
    instance: "coder-1",
    role: "coder",
    run: "run-1",
    runDir: dir,
    workspace: dir,
    brokerSocket,
    launchSocket: null,
    adapter: {
      argv: ["/bin/sh", "-c", 'printf "reply to %s\\n" "$1"', "sh"],
      env: { PATH: "/usr/bin:/bin" },
      cwd: dir,
    },
    turnEnd: { kind: "exit", why: "the fake adapter" },
    tripwire: null,
    turnTimeoutSeconds: 10,
    brokerRetries: 3,
    pollMs: 1,
    brokerTimeoutSeconds: 2,
    model: null,
    toolSocket: { path: toolSocket, fd: 3 },
    bounds: planRunnerBounds({ kind: "exit" }),
    ...over,
  };
  writeFileSync(join(dir, "session.json"), JSON.stringify(session));
  return { dir, session, brokerSocket, toolSocket };
}

/** Rewrites the run's session.json with `over` (for fields that name paths inside the run directory). */
export function rewrite(r: Run, over: Record<string, unknown>): void {
  r.session = { ...r.session, ...over };
  writeFileSync(join(r.dir, "session.json"), JSON.stringify(r.session));
}

/**
 * The runner on `argv`: stdin is `stdin` written to a pipe (left open with `keepStdinOpen`), or a
 * descriptor; `onSpawn` sees the child first (and may close its stderr). `env` is the children's environment (a shared compile
 * cache keeps the runners after the first from compiling). Resolves with its exit.
 */
export function runner(
  argv: string[],
  env: Record<string, string>,
  opts: { stdin?: string | number; keepStdinOpen?: boolean; fd?: number; onSpawn?: (child: Child) => void } = {},
): Promise<Ended> {
  const sweep = sweepChild();
  const stdio: StdioOptions = [
    typeof opts.stdin === "number" ? opts.stdin : "pipe",
    "ignore",
    "pipe",
    ...(opts.fd === undefined ? [] : [opts.fd]),
  ];
  const child = spawn(process.execPath, [...sweep.execArgv, MAIN, ...argv], { env: { ...env, ...sweep.env }, stdio });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d));
  child.stderr!.on("error", () => {});
  opts.onSpawn?.(child);
  if (typeof opts.stdin === "string") {
    child.stdin!.on("error", () => {});
    if (opts.keepStdinOpen === true) child.stdin!.write(opts.stdin);
    else child.stdin!.end(opts.stdin);
  }
  const timer = setTimeout(() => child.kill("SIGTERM"), 15_000);
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      sweep.collect();
      resolve({ code, signal, stderr });
    });
  });
}

/**
 * A whole session on `r`: the broker answers as `answer` says; `stopWhen` (checked at each
 * request, before it is answered) may stop the runner it is given.
 */
export async function session(
  r: Run,
  env: Record<string, string>,
  answer: Answer,
  stopWhen: (seen: Req[], child: Child) => void,
  opts: {
    stdin?: string;
    keepStdinOpen?: boolean;
    onSpawn?: (child: Child) => void;
    after?: (q: Req, nth: number, child: Child) => void;
  } = {},
): Promise<Ended & { seen: Req[] }> {
  let child: Child | null = null;
  const b = await broker(
    r.brokerSocket,
    (q, nth) => {
      if (child !== null) stopWhen(b.seen, child);
      return answer(q, nth);
    },
    (q, nth) => {
      if (child !== null) opts.after?.(q, nth, child);
    },
  );
  const sock = boundSocket(r.toolSocket);
  try {
    const ended = await runner([r.dir], env, {
      stdin: opts.stdin ?? CAP,
      keepStdinOpen: opts.keepStdinOpen,
      fd: sock.fd,
      onSpawn: (c) => {
        child = c;
        opts.onSpawn?.(c);
      },
    });
    return { ...ended, seen: b.seen };
  } finally {
    sock.close();
    b.server.close();
  }
}

/** One tool-socket request and its answer line, parsed. */
export function toolCall(path: string, req: unknown): Promise<unknown> {
  return new Promise((done, fail) => {
    const c = connect(path, () => c.write(JSON.stringify(req) + "\n"));
    let buf = "";
    c.setEncoding("utf8");
    c.on("data", (d: string) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl === -1) return;
      c.destroy();
      done(JSON.parse(buf.slice(0, nl)));
    });
    c.on("error", fail);
  });
}

/** A tool call the runner refuses at once (no tools.json: no typed tool): a round trip through its event loop. */
export const refusedToolCall = (r: Run, id: number) => toolCall(r.toolSocket, { id, tool: "nope", args: {} });
export const REFUSED = (id: number) => ({
  id,
  ok: false,
  error: "refused: nope is not one of this session's typed tools",
});

/** A broker with the messages waiting at the first read, then none; `other` answers first when it has an answer (of its own kind, R). */
export const withMessages =
  <R = Reply>(msgs: Msg[], other: (q: Req, nth: number) => R | undefined = () => undefined) =>
  (q: Req, nth: number): R | Reply => {
    const o = other(q, nth);
    if (o !== undefined) return o;
    if (q.verb === "message.read") return ok({ messages: nth === 1 ? msgs : [] });
    return ok();
  };

/** The verbs asked, a run of reads as one. */
export const verbs = (seen: Req[]) =>
  seen.map((q) => q.verb).filter((v, i, a) => v !== "message.read" || a[i - 1] !== v);
export const sends = (seen: Req[]) => seen.filter((q) => q.verb === "message.send").map((q) => q.args);
export const count = (seen: Req[], verb: string) => seen.filter((q) => q.verb === verb).length;

/** Stops the runner with SIGTERM once, at the first request `when` holds for. */
export const stopOnce = (when: (seen: Req[]) => boolean) => {
  let stopped = false;
  return (seen: Req[], child: Child) => {
    if (stopped || !when(seen)) return;
    stopped = true;
    child.kill("SIGTERM");
  };
};
/** Never stops the runner: it ends by itself. */
export const never = () => {};
