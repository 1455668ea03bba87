// The edges the generated sweep (npm run mutants:sweep) found untested in env.ts, credentials.ts
// and egress.ts: a variable or header present but unset, and what a session with network none is
// told when it calls the model.
import { validateHeaderValue } from "node:http";
import { describe, expect, it } from "vitest";
import { decideEgress, egressErrorBody, upstreamHeaders } from "../src/core/network/egress.ts";
import { sessionEnv } from "../src/core/session/env.ts";

const STAND_IN = "stand-in-value";

describe("session environment: a variable present but unset", () => {
  it("an allowed variable the host holds as undefined does not reach the session, not even as a name", () => {
    const env = sessionEnv({ PATH: undefined, LANG: "C.UTF-8", TZ: undefined, GH_TOKEN: undefined });
    expect(env).toStrictEqual({ LANG: "C.UTF-8" });
    expect(Object.keys(env), "only the variables that are set").toEqual(["LANG"]);
    expect(
      Object.entries(env).map(([k, v]) => `${k}=${v}`),
      "no variable renders as the string undefined",
    ).toEqual(["LANG=C.UTF-8"]);
  });
  it("an allowed variable set to the empty string still passes: empty is set", () => {
    expect(sessionEnv({ TERM: "", PATH: undefined })).toStrictEqual({ TERM: "" });
  });
});

describe("a session with network none", () => {
  it.each([
    ["POST", "/v1/messages"],
    ["HEAD", "/"],
    ["GET", "/v1/models"],
  ])("%s %s is refused as a permission error that names the policy", (method, target) => {
    const d = decideEgress("none", method, target);
    expect(d).toEqual({
      kind: "refuse",
      status: 403,
      errorType: "permission_error",
      message: "this session has no network (policy network: none)",
    });
    if (d.kind !== "refuse") throw new Error(`${method} ${target}: not refused`);
    expect(JSON.parse(egressErrorBody(d)), "the body the session reads").toEqual({
      type: "error",
      error: { type: "permission_error", message: "this session has no network (policy network: none)" },
    });
  });
});

describe("upstream headers: a header present but unset", () => {
  const credential = { header: "x-api-key", value: `stand-in-real-${STAND_IN}` } as const;
  it("a header the session holds as undefined is not sent upstream, so node can send what remains", () => {
    const out = upstreamHeaders(
      { "content-type": "application/json", "anthropic-version": undefined, "X-Stainless-Lang": undefined },
      credential,
      "api.example:443",
    );
    expect(out).toStrictEqual({
      "content-type": "application/json",
      host: "api.example:443",
      "x-api-key": credential.value,
    });
    for (const [k, v] of Object.entries(out))
      expect(() => validateHeaderValue(k, v as string), `${k} is a value node will send`).not.toThrow();
  });
});
