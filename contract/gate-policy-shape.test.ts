// The policy shapes the generated sweep found untested: a policy that is not an object, and each
// field of it missing or of the wrong type; each must get its own reason, and the gate must refuse every call.
import { describe, expect, it } from "vitest";
import { decide } from "../src/core/gate/decide.ts";
import { readGatePolicy } from "../src/core/gate/policy-shape.ts";
import { hookOutcome } from "../src/host/claude-gate.ts";
import { memoryView } from "../src/conformance/worlds/tree.ts";

const wellFormed = {
  harness: "claude-code",
  workspace: "/ws",
  home: "/home/s",
  builtInTools: ["Read", "read", "Bash"],
  typedTools: ["lookup"],
  network: "none",
};
const fs = memoryView({ "/ws/a.txt": "file", "/home/s/.profile": "file" });

/** Calls the well-formed policy allows, and two it blocks for reasons of their own. */
const calls: { tool: unknown; input: unknown; allowed: boolean }[] = [
  { tool: "Read", input: { file_path: "/ws/a.txt" }, allowed: true },
  { tool: "read", input: { path: "a.txt" }, allowed: true },
  { tool: "Bash", input: { command: "true" }, allowed: true },
  { tool: "lookup", input: {}, allowed: true },
  { tool: "Write", input: { file_path: "/ws/a.txt" }, allowed: false },
  { tool: 3, input: {}, allowed: false },
];

const without = (field: string): Record<string, unknown> => {
  const p: Record<string, unknown> = { ...wellFormed };
  delete p[field];
  return p;
};
const withField = (field: string, value: unknown) => ({ ...wellFormed, [field]: value });

/** Each malformed policy, what is wrong with it, and the reason it must get. */
const malformed: { what: string; policy: unknown; reason: string }[] = [
  ...(
    [
      ["a string", "policy.json"],
      ["a number", 42],
      ["a boolean", true],
      ["undefined", undefined],
      ["null", null],
      ["an empty array", []],
      ["an array holding a well-formed policy", [wellFormed]],
    ] as const
  ).map(([what, policy]) => ({ what: `the policy is ${what}`, policy, reason: "not a JSON object" })),
  ...(["workspace", "home"] as const).flatMap((f) =>
    (
      [
        ["missing", without(f)],
        ["a number", withField(f, 3)],
        ["null", withField(f, null)],
        ["a list of one absolute path", withField(f, ["/ws"])],
        ["relative", withField(f, "ws")],
        ["empty", withField(f, "")],
        ["absolute with a NUL byte", withField(f, "/ws\0x")],
      ] as const
    ).map(([what, policy]) => ({ what: `${f} is ${what}`, policy, reason: `${f} is not an absolute path` })),
  ),
  ...(["builtInTools", "typedTools"] as const).flatMap((f) =>
    (
      [
        ["missing", without(f)],
        ["a string", withField(f, "Read")],
        ["null", withField(f, null)],
        ["an object", withField(f, { 0: "Read", length: 1 })],
        ["a list with a number among names", withField(f, ["Read", 3])],
        ["a list holding only null", withField(f, [null])],
      ] as const
    ).map(([what, policy]) => ({ what: `${f} is ${what}`, policy, reason: `${f} is not a list of names` })),
  ),
];

describe("readGatePolicy: the policy's shape", () => {
  it("a well-formed policy gives the four fields the gate reads, paths normalised, lists as given", () => {
    expect(readGatePolicy({ ...wellFormed, workspace: "/ws/./sub/../", home: "//home/s/", typedTools: [] })).toEqual({
      workspace: "/ws",
      home: "/home/s",
      builtInTools: ["Read", "read", "Bash"],
      typedTools: [],
    });
    expect(readGatePolicy(wellFormed)).toEqual({
      workspace: "/ws",
      home: "/home/s",
      builtInTools: ["Read", "read", "Bash"],
      typedTools: ["lookup"],
    });
  });

  it.each(malformed)("$what: malformed, naming it ($reason)", ({ policy, reason }) => {
    expect(readGatePolicy(policy)).toEqual({ malformed: reason });
  });

  it("with several fields wrong, the first in the order workspace, home, builtInTools, typedTools is named", () => {
    const all = { workspace: 1, home: 2, builtInTools: 3, typedTools: 4 };
    expect(readGatePolicy(all)).toEqual({ malformed: "workspace is not an absolute path" });
    expect(readGatePolicy({ ...all, workspace: "/ws" })).toEqual({ malformed: "home is not an absolute path" });
    expect(readGatePolicy({ ...all, workspace: "/ws", home: "/h" })).toEqual({
      malformed: "builtInTools is not a list of names",
    });
    expect(readGatePolicy({ ...all, workspace: "/ws", home: "/h", builtInTools: [] })).toEqual({
      malformed: "typedTools is not a list of names",
    });
  });
});

describe("the gate under a malformed policy refuses every call, naming what is wrong", () => {
  it("positive control: the well-formed policy allows the calls it grants and blocks the rest for their own reasons", () => {
    for (const c of calls) {
      const d = decide(wellFormed, c.tool, c.input, fs);
      expect(d.allow, JSON.stringify(c)).toBe(c.allowed);
      if (!d.allow) expect(d.reason).not.toMatch(/malformed/);
    }
  });

  it.each(malformed)("$what: every call is blocked with the policy's reason", ({ policy, reason }) => {
    for (const c of calls)
      expect(decide(policy, c.tool, c.input, fs), JSON.stringify(c)).toEqual({
        allow: false,
        reason: `the policy is malformed: ${reason}`,
      });
  });

  it("the Claude Code hook exits 2 with the malformed field on stderr", () => {
    const stdin = JSON.stringify({ tool_name: "Read", tool_input: { file_path: "/ws/a.txt" }, tool_use_id: "t1" });
    expect(hookOutcome(stdin, JSON.stringify(wellFormed), decide, fs), "positive control").toMatchObject({ code: 0 });
    expect(hookOutcome(stdin, JSON.stringify(withField("typedTools", ["lookup", 7])), decide, fs)).toEqual({
      code: 2,
      stderr: "mosaic gate: the policy is malformed: typedTools is not a list of names\n",
      call: { call: "t1", tool: "Read", input: { file_path: "/ws/a.txt" } },
    });
  });
});
