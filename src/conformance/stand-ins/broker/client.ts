// A newline-delimited JSON client for tests: raw bytes out, response lines back in order.
import { connect, type Socket } from "node:net";
import { renderRequest, type BrokerRequest, type BrokerResponse } from "./protocol.ts";

export type LineEvent = { kind: "line"; text: string } | { kind: "timeout" } | { kind: "closed" };

export interface LineClient {
  /** Writes raw text or bytes, framing included. */
  send(data: string | Uint8Array): void;
  /** The next response line, or timeout after `ms`, or closed when the server ended the connection. */
  next(ms: number): Promise<LineEvent>;
  /** Sends one request and parses the next line as its response (fails on timeout or close). */
  call(req: BrokerRequest, ms?: number): Promise<BrokerResponse>;
  close(): void;
}

export function connectLines(path: string): Promise<LineClient> {
  return new Promise((ok, fail) => {
    const sock: Socket = connect(path);
    const lines: string[] = [];
    const waiters: Array<() => void> = [];
    let buf = "";
    let ended = false;
    const wake = () => waiters.splice(0).forEach((w) => w());
    sock.setEncoding("utf8");
    sock.on("data", (d: string) => {
      buf += d;
      for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
        lines.push(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
      }
      wake();
    });
    sock.on("close", () => {
      ended = true;
      wake();
    });
    sock.once("error", fail);
    sock.on("connect", () => {
      sock.off("error", fail);
      sock.on("error", () => {});
      const next = (ms: number) =>
        new Promise<LineEvent>((done) => {
          let finished = false;
          const finish = (e: LineEvent) => {
            finished = true;
            clearTimeout(timer);
            done(e);
          };
          // A waiter left behind by a timeout must not take a later line.
          const settle = () => {
            if (finished) return;
            const text = lines.shift();
            if (text !== undefined) finish({ kind: "line", text });
            else if (ended) finish({ kind: "closed" });
            else waiters.push(settle);
          };
          const timer = setTimeout(() => finish({ kind: "timeout" }), ms);
          settle();
        });
      ok({
        send: (data) => void sock.write(data),
        next,
        call: async (req, ms = 2000) => {
          sock.write(renderRequest(req));
          const e = await next(ms);
          if (e.kind !== "line") throw new Error(`no response to ${req.verb}: ${e.kind}`);
          return JSON.parse(e.text) as BrokerResponse;
        },
        close: () => void sock.destroy(),
      });
    });
  });
}
