import { connect } from "node:net";
import type { BrokerAnswer } from "../../core/runner/decisions.ts";

let nextId = 1;

/**
 * One broker call over its own connection: `{id, cap, verb, args}` out, one line back. No answer
 * within the timeout, a refused connection or a garbled line all count as unreachable. Nothing
 * here throws: args that cannot be encoded are a call not made, an answer that cannot be read is
 * unreachable.
 */
export function callBroker(
  socket: string,
  cap: string,
  verb: string,
  args: Record<string, unknown>,
  timeoutMs: number,
): Promise<BrokerAnswer> {
  const id = nextId++;
  let request: string;
  try {
    // Encoded here, before any connection: a throw inside a socket's event would escape to pid 1.
    request = JSON.stringify({ id, cap, verb, args }) + "\n"; // safety: broker-call-encode-escapes
  } catch (e) {
    return Promise.resolve({
      kind: "unreachable",
      why: `the request could not be encoded (${e instanceof Error ? e.message : String(e)})`,
    });
  }
  return new Promise((resolve) => {
    let buf = "";
    let done = false;
    const finish = (a: BrokerAnswer) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      c.destroy();
      resolve(a);
    };
    const c = connect(socket);
    const timer = setTimeout(() => finish({ kind: "unreachable", why: `no answer within ${timeoutMs} ms` }), timeoutMs);
    c.setEncoding("utf8");
    c.on("connect", () => c.write(request));
    c.on("data", (d: string) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl === -1) return;
      try {
        const r = JSON.parse(buf.slice(0, nl)) as {
          id?: unknown;
          ok?: unknown;
          result?: unknown;
          error?: { code?: unknown; message?: unknown };
        } | null;
        if (typeof r !== "object" || r === null)
          return finish({ kind: "unreachable", why: "an answer that is not a JSON object" });
        // A null id: the broker could not read this request (too long, say) and says why.
        if (r.id !== id && !(r.id === null && r.ok === false))
          return finish({ kind: "unreachable", why: "an answer for another request" });
        if (r.ok === true) return finish({ kind: "ok", result: r.result });
        return finish({
          kind: "error",
          code: String(r.error?.code ?? "unknown"),
          message: String(r.error?.message ?? ""),
        });
      } catch {
        finish({ kind: "unreachable", why: "an answer that is not JSON" });
      }
    });
    c.on("error", (e: NodeJS.ErrnoException) => finish({ kind: "unreachable", why: e.code ?? e.message }));
    c.on("close", () => finish({ kind: "unreachable", why: "the broker closed the connection" }));
  });
}
