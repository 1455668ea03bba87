// The edges of remedy.ts the generated sweep found untested: the order remedies are planned in
// whatever order the findings come, what the workspace itself gets, and each verdict of the report
// with its failures, so a report never says quarantined while something is still there.
import { describe, expect, it } from "vitest";
import type { Finding } from "../src/core/workspace/findings.ts";
import { type Done, planRemedies, relativeTo, reportOf } from "../src/core/workspace/remedy.ts";

const WS = "/srv/ws";
const Q = "/srv/q";
const f = (kind: Finding["kind"], rel: string, detail = "seen"): Finding => ({
  kind,
  path: rel === "." ? WS : `${WS}/${rel}`,
  detail,
});

describe("planning the remedies", () => {
  it("a finding under one that moves needs nothing, whichever comes first", () => {
    const findings = [f("git-not-plain", "sub/.git/hooks/x"), f("nested-repository", "sub/.git"), f("unreadable", "a")];
    expect(planRemedies(WS, Q, findings)).toEqual([
      { op: "move", kind: "unreadable", from: `${WS}/a`, to: `${Q}/files/a`, detail: "seen" },
      { op: "move", kind: "nested-repository", from: `${WS}/sub/.git`, to: `${Q}/files/sub/.git`, detail: "seen" },
    ]);
  });

  it("findings given in reverse order are planned in path order", () => {
    const setid = (rel: string) => ({ ...f("setid-file", rel), mode: 0o4755 });
    expect(
      planRemedies(WS, Q, [setid("c"), setid("b"), setid("a")]).map((r) => (r.op === "clear-setid" ? r.path : r.op)),
    ).toEqual([`${WS}/a`, `${WS}/b`, `${WS}/c`]);
  });

  it("of two findings at one path, the first given is the one moved", () => {
    expect(planRemedies(WS, Q, [f("git-pointer", "b", "first"), f("git-foreign-name", "b", "second")])).toEqual([
      { op: "move", kind: "git-pointer", from: `${WS}/b`, to: `${Q}/files/b`, detail: "first" },
    ]);
  });

  it("the workspace itself, or a path outside it, is left with a reason", () => {
    expect(
      planRemedies(WS, Q, [f("discoverable-repository", ".", "a HEAD"), { ...f("unreadable", "x"), path: "/srv/wsx" }]),
    ).toEqual([
      {
        op: "none",
        kind: "discoverable-repository",
        path: WS,
        detail: "a HEAD; the workspace itself cannot be moved aside",
      },
      { op: "none", kind: "unreadable", path: "/srv/wsx", detail: "seen; the workspace itself cannot be moved aside" },
    ]);
  });
});

describe("the report", () => {
  const done: Done[] = [{ kind: "unreadable", path: "a", did: "moved", to: "files/a", detail: "seen" }];

  it("clean when nothing was done, failed or left", () => {
    expect(reportOf(WS, Q, [], [], [])).toEqual({ verdict: "clean", workspace: WS });
  });

  it("quarantined when everything was done and a second look finds nothing", () => {
    expect(reportOf(WS, Q, done, [], [])).toEqual({ verdict: "quarantined", workspace: WS, quarantine: Q, done });
  });

  it("unsafe when a remedy failed, with what was done", () => {
    const failed = [{ kind: "check" as const, path: ".", error: "EACCES" }];
    expect(reportOf(WS, Q, done, failed, [])).toEqual({
      verdict: "unsafe",
      workspace: WS,
      quarantine: Q,
      done,
      failed,
    });
    expect(reportOf(WS, Q, [], failed, [])).toEqual({
      verdict: "unsafe",
      workspace: WS,
      quarantine: Q,
      done: [],
      failed,
    });
  });

  it("unsafe when a second look still finds something, each as a failure relative to the workspace", () => {
    expect(
      reportOf(WS, Q, done, [], [f("setid-file", "bin/x", "mode 4755"), f("unreadable", ".", "cannot be listed")]),
    ).toEqual({
      verdict: "unsafe",
      workspace: WS,
      quarantine: Q,
      done,
      failed: [
        { kind: "setid-file", path: "bin/x", error: "still there after the remedies: mode 4755" },
        { kind: "unreadable", path: ".", error: "still there after the remedies: cannot be listed" },
      ],
    });
  });

  it("unsafe when nothing was done but a second look finds something", () => {
    expect(reportOf(WS, Q, [], [], [f("unreadable", "a", "cannot be listed")])).toEqual({
      verdict: "unsafe",
      workspace: WS,
      quarantine: Q,
      done: [],
      failed: [{ kind: "unreadable", path: "a", error: "still there after the remedies: cannot be listed" }],
    });
  });

  it("a path reads relative to the workspace: '.' for the workspace itself, as given outside it", () => {
    expect([WS, `${WS}/a/b`, "/srv/wsx", "/elsewhere"].map((p) => relativeTo(WS, p))).toEqual([
      ".",
      "a/b",
      "/srv/wsx",
      "/elsewhere",
    ]);
  });
});
