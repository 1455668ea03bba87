// The plan edits every positive control is made of (src/conformance/controls/): a control that
// silently removed nothing, or removed a token of the command run inside, would pass as a proof.
import { describe, expect, it } from "vitest";
import type { Bind } from "../src/core/sandbox/types.ts";
import { SECCOMP_RULES } from "../src/core/sandbox/seccomp.ts";
import {
  withBeforePair,
  withoutAnyOf,
  withoutFlags,
  withoutPair,
  withoutPrefixed,
} from "../src/conformance/controls/argv.ts";
import { exposedBind, withBindsBeforeLast, withoutRow, withUnboundedTmpfs } from "../src/conformance/controls/binds.ts";
import { withoutSeccompRule, withSeccompCheck } from "../src/conformance/controls/seccomp.ts";

const BWRAP = [
  "--unshare-net",
  "--cap-drop",
  "ALL",
  "--remount-ro",
  "/",
  "--",
  "setpriv",
  "--pdeathsig",
  "KILL",
  "--",
  "prlimit",
  "--nproc=512",
  "--",
  "node",
  "--unshare-net",
];

describe("argv edits", () => {
  it("bwrap's own flags end at its first --: what setpriv, prlimit and the runner get is untouched", () => {
    expect(withoutAnyOf("--unshare-net", "--pdeathsig")(BWRAP)).toEqual(BWRAP.slice(1));
    expect(withoutPair("--cap-drop", "ALL")(BWRAP)).toEqual(["--unshare-net", "--remount-ro", "/", ...BWRAP.slice(5)]);
    expect(withoutPair("--pdeathsig", "KILL")(BWRAP)).toEqual(BWRAP);
  });

  it("prlimit's flags, after bwrap's --, go by prefix", () => {
    expect(withoutPrefixed("--nproc=")(BWRAP)).toEqual(BWRAP.filter((t) => t !== "--nproc=512"));
  });

  it("a CLI's flags end at its last --, and a flag that is not there throws rather than remove nothing", () => {
    expect(withoutFlags(["pi", "-nc", "-e", "gate.ts", "--", "-nc"], ["-nc", ["-e", "gate.ts"]])).toEqual([
      "pi",
      "--",
      "-nc",
    ]);
    expect(() => withoutFlags(["pi", "-e", "other.ts"], [["-e", "gate.ts"]])).toThrow(
      'the argv has no -e "gate.ts" to drop',
    );
  });

  it("tokens go before a named pair, which must be there", () => {
    expect(withBeforePair(BWRAP, "--remount-ro", "/", ["--bind", "/tmp", "/tmp"]).slice(3, 8)).toEqual([
      "--bind",
      "/tmp",
      "/tmp",
      "--remount-ro",
      "/",
    ]);
    expect(() => withBeforePair(["--"], "--remount-ro", "/", [])).toThrow("no --remount-ro");
  });
});

describe("bind table edits", () => {
  const table: Bind[] = [
    { source: "/usr", inside: "/usr", mode: "ro", why: "x", row: "usr" },
    { source: "/t", inside: "/tmp", mode: "tmpfs", why: "x", row: "tmp", size: 256 },
  ];

  it("extra rows go before the last, which stays last; an empty table throws", () => {
    const out = withBindsBeforeLast(table, [exposedBind("/home/f")]);
    expect(out.map((b) => b.row)).toEqual(["usr", "runner-file", "tmp"]);
    expect(out[1]).toEqual({
      source: "/home/f",
      inside: "/home/f",
      mode: "ro",
      why: "broken on purpose",
      row: "runner-file",
    });
    expect(() => withBindsBeforeLast([], [])).toThrow("empty bind table");
  });

  it("a row removed, a tmpfs unbounded", () => {
    expect(withoutRow(table, "usr").map((b) => b.row)).toEqual(["tmp"]);
    expect(withUnboundedTmpfs(table, "tmp")[1]!.size).toBeUndefined();
    expect(table[1]!.size).toBe(256);
  });
});

describe("seccomp edits", () => {
  it("a rule removed by name from deny and ioctl, a check switched off, the shipped rules untouched", () => {
    const name = SECCOMP_RULES.deny[0]!.name;
    const out = withoutSeccompRule(null, name);
    expect(out.deny.some((d) => d.name === name)).toBe(false);
    expect(out.deny.length).toBe(SECCOMP_RULES.deny.length - 1);
    expect(withSeccompCheck(out, { x32: false })).toEqual({ ...out, x32: false });
    expect(SECCOMP_RULES.deny.some((d) => d.name === name)).toBe(true);
  });
});
