// serveModelProxy() for the contract tests that run it in their own process: the same proxy, whose
// process, under StrykerJS's sweep only, gets the active mutant and reports the mutants it reached
// (contract/support/sweep-child.ts) once it is closed. Outside the sweep it is serveModelProxy().
import { serveModelProxy, type ModelProxy, type ModelProxyOptions } from "../../src/host/model-proxy.ts";
import { sweepChild } from "./sweep-child.ts";

export function serveSweptProxy(o: ModelProxyOptions): ModelProxy {
  const sweep = sweepChild();
  const p = serveModelProxy({ ...o, child: { execArgv: sweep.execArgv, env: sweep.env } });
  let closed: Promise<void> | null = null;
  return { listening: p.listening, close: () => (closed ??= p.close().then(() => sweep.collect())) };
}
