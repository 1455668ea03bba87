// The edges of session-file.ts the generated sweep found untested: for each field of session.json,
// the value just inside its bound parses and one just outside is refused with that field's exact
// name and reason, which the runner prints when it exits 2; and the capability line's refusals.
import { describe, expect, it } from "vitest";
import { parseCapabilityLine, parseSessionFile } from "../src/core/runner/session-file.ts";

const good = {
  version: 1,
  business: "b",
  instance: "i",
  role: "coder",
  run: "run-1",
  runDir: "/run/x",
  workspace: "/ws",
  brokerSocket: "/srv/broker.sock",
  launchSocket: null,
  adapter: { argv: ["/bin/fake", "--turn"], env: { A: "a" }, cwd: "/ws" },
  turnEnd: { kind: "exit", why: "the fake adapter" },
  tripwire: null,
  turnTimeoutSeconds: 900,
  brokerRetries: 30,
  pollMs: 1000,
  brokerTimeoutSeconds: 10,
  model: null,
  toolSocket: { path: "/run/x/sock/tools.sock", fd: 4 },
  bounds: {
    toolSocket: { lineBytes: 1, depth: 1, argsBytes: 1, connections: 1, pending: 1 },
    turn: { stdoutBytes: 1, stderrBytes: 1, stderrFiles: 1, killNamespace: true },
  },
};
const parse = (over: Record<string, unknown>) => parseSessionFile(JSON.stringify({ ...good, ...over }));
const refusal = (field: string, why: string) => ({ ok: false, field, why });
const ABS = "an absolute path";
const adapter = (over: Record<string, unknown>) => ({ adapter: { ...good.adapter, ...over } });
const MODEL = "null, or {port: 1..65535, socket: an absolute path}";
const TOOL_SOCKET = "{path: an absolute path, fd: a descriptor number of 3 or more}";

describe("parseSessionFile: values just inside each bound parse", () => {
  it("the fake adapter's file, and each field at the edge of what it takes", () => {
    for (const over of [
      {},
      { launchSocket: "/srv/launch.sock" },
      { turnEnd: { kind: "marker", file: "/run/x/turn-end" } },
      { turnEnd: { kind: "result-line" } },
      { tripwire: { stream: "pi-json", typedTools: ["read", "send_message"] } },
      { model: { port: 65535, socket: "/run/x/sock/model.sock" } },
      { model: { port: 1, socket: "/run/x/sock/model.sock" } },
      { toolSocket: { path: "/run/x/sock/tools.sock", fd: 3 } },
    ]) {
      const p = parse(over);
      expect(p, JSON.stringify(over)).toEqual({ ok: true, value: { ...good, ...over } });
    }
  });
});

describe("parseSessionFile: the first bad field, named with its reason", () => {
  it("text that is not a JSON object", () => {
    let parseError = "";
    try {
      JSON.parse("nope");
    } catch (e) {
      parseError = (e as Error).message; // node's own JSON.parse message
    }
    expect(parseSessionFile("nope")).toEqual(refusal("(file)", `not JSON: ${parseError}`));
    for (const text of ["null", "[]", '"x"'])
      expect(parseSessionFile(text), text).toEqual(refusal("(file)", "not a JSON object"));
    expect(parse({ version: 2 })).toEqual(refusal("version", "expected 1"));
    expect(parse({ role: "" })).toEqual(refusal("role", "a non-empty string"));
  });
  it("paths that are not absolute", () => {
    expect(parse({ runDir: "run/x" })).toEqual(refusal("runDir", ABS));
    expect(parse({ brokerSocket: "" })).toEqual(refusal("brokerSocket", ABS));
    expect(parse({ launchSocket: "launch.sock" })).toEqual(refusal("launchSocket", "an absolute path or null"));
    expect(parse(adapter({ cwd: "ws" }))).toEqual(refusal("adapter.cwd", ABS));
    expect(parse({ turnEnd: { kind: "marker", file: "turn-end" } })).toEqual(refusal("turnEnd.file", ABS));
  });
  it("the adapter: an object, its argv strings led by an absolute path, its env all strings", () => {
    expect(parse({ adapter: null })).toEqual(refusal("adapter", "an object"));
    const argv = refusal("adapter.argv", "a list of strings whose first is an absolute path");
    for (const v of ["/bin/fake", [], ["fake"], ["/bin/fake", 3]])
      expect(parse(adapter({ argv: v })), JSON.stringify(v)).toEqual(argv);
    const env = refusal("adapter.env", "an object of strings");
    for (const v of [null, ["a"], { A: "a", B: 1 }]) expect(parse(adapter({ env: v })), JSON.stringify(v)).toEqual(env);
  });
  it("turnEnd and tripwire", () => {
    for (const v of [null, { kind: "other" }, {}])
      expect(parse({ turnEnd: v }), JSON.stringify(v)).toEqual(refusal("turnEnd.kind", "marker, result-line or exit"));
    expect(parse({ tripwire: { stream: "pi-json", typedTools: ["read", ""] } })).toEqual(
      refusal("tripwire", "null, or {stream: claude-stream-json or pi-json, typedTools: a list of names}"),
    );
  });
  it("counts that are not positive integers", () => {
    for (const v of [0, 1.5, "1000"])
      expect(parse({ pollMs: v }), JSON.stringify(v)).toEqual(refusal("pollMs", "a positive integer"));
  });
  it("the model: null, or a port of 1..65535 and an absolute socket", () => {
    const socket = "/run/x/sock/model.sock";
    for (const v of [
      "x",
      { socket },
      { port: 0, socket },
      { port: 1.5, socket },
      { port: 65536, socket },
      { port: 8787, socket: "model.sock" },
    ])
      expect(parse({ model: v }), JSON.stringify(v)).toEqual(refusal("model", MODEL));
  });
  it("the tool socket: an absolute path and a descriptor past stdio and the seccomp program's 3", () => {
    const path = "/run/x/sock/tools.sock";
    for (const v of ["x", { path: "tools.sock", fd: 4 }, { path, fd: "4" }, { path, fd: 4.5 }, { path, fd: 2 }])
      expect(parse({ toolSocket: v }), JSON.stringify(v)).toEqual(refusal("toolSocket", TOOL_SOCKET));
  });
  it("the bounds: both objects, each count positive, killNamespace a boolean", () => {
    const b = good.bounds;
    expect(parse({ bounds: { turn: b.turn } })).toEqual(refusal("bounds", "{toolSocket: {...}, turn: {...}}"));
    expect(parse({ bounds: { ...b, toolSocket: { ...b.toolSocket, pending: 0 } } })).toEqual(
      refusal("bounds.toolSocket.pending", "a positive integer"),
    );
    expect(parse({ bounds: { ...b, turn: { ...b.turn, stderrBytes: 0 } } })).toEqual(
      refusal("bounds.turn.stderrBytes", "a positive integer"),
    );
    for (const stderrFiles of [0, 1.5, "16", undefined])
      expect(parse({ bounds: { ...b, turn: { ...b.turn, stderrFiles } } }), String(stderrFiles)).toEqual(
        refusal("bounds.turn.stderrFiles", "a positive integer"),
      );
    expect(parse({ bounds: { ...b, turn: { ...b.turn, killNamespace: 1 } } })).toEqual(
      refusal("bounds.turn.killNamespace", "true or false"),
    );
  });
});

describe("parseCapabilityLine", () => {
  it("a line that is not JSON, and one without a non-empty cap, each with its reason", () => {
    expect(parseCapabilityLine("c-1")).toEqual(refusal("stdin", "the first line is not JSON"));
    expect(parseCapabilityLine('{"cap": ""}')).toEqual(refusal("stdin.cap", "a non-empty string"));
  });
});
