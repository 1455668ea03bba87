// The edges of spec-schema.ts, identity.ts, handover.ts, render.ts and diagnose.ts the generated
// sweep found untested: which spec error is a missing field, ids at the edge of their range, who
// needs no chown, the argv lines a stand-in shares, and the diagnosis rows without a version.
import { describe, expect, it } from "vitest";
import { isMosaicError } from "../src/core/errors.ts";
import { ROLE_CASES } from "../src/conformance/worlds/host-fixtures.ts";
import { parseSandboxSpec } from "../src/core/sandbox/spec-schema.ts";
import { dropToSession, sessionIdentity } from "../src/core/sandbox/identity.ts";
import { planHandover, type OwnedEntry } from "../src/core/sandbox/handover.ts";
import { renderArgvLines } from "../src/core/sandbox/render.ts";
import { bwrapVersionOf, diagnoseProbe, type ProbeSeen } from "../src/core/sandbox/diagnose.ts";

const good = ROLE_CASES["pi-coder"]!.spec;
const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return isMosaicError(e) ? { code: e.code, field: e.field, message: e.message } : `not a MosaicError: ${String(e)}`;
  }
  return "no error";
};

describe("parseSandboxSpec: a bad document names its first bad field", () => {
  it("an absent field is missing-field; a field of the wrong type is bad-field", () => {
    expect(refusal(() => parseSandboxSpec({ ...good, repo: undefined }))).toEqual({
      code: "missing-field",
      field: "repo",
      message: "repo: Invalid input: expected string, received undefined",
    });
    expect(refusal(() => parseSandboxSpec({ ...good, repo: 3 }))).toEqual({
      code: "bad-field",
      field: "repo",
      message: "repo: Invalid input: expected string, received number",
    });
  });
  it("a nested field is named by its dotted path; the document itself is (spec)", () => {
    expect(refusal(() => parseSandboxSpec({ ...good, runnerFiles: ["/a", 4] }))).toEqual({
      code: "bad-field",
      field: "runnerFiles.1",
      message: "runnerFiles.1: Invalid input: expected string, received number",
    });
    expect(refusal(() => parseSandboxSpec("x"))).toEqual({
      code: "bad-field",
      field: "(spec)",
      message: "(spec): Invalid input: expected object, received string",
    });
  });
  it("an unknown key is bad-field even when it is called undefined", () => {
    expect(refusal(() => parseSandboxSpec({ ...good, undefined: 1 }))).toEqual({
      code: "bad-field",
      field: "(spec)",
      message: '(spec): Unrecognized key: "undefined"',
    });
  });
  it("a good spec comes back as it was", () => {
    expect(parseSandboxSpec({ ...good })).toEqual(good);
  });
});

describe("session ids at the edges", () => {
  const root = { uid: 0, gid: 0 };
  it("an id with anything after its digits is refused", () => {
    expect(refusal(() => sessionIdentity(root, { MOSAIC_SESSION_UID: "1000x" }))).toEqual({
      code: "session-identity",
      field: "MOSAIC_SESSION_UID",
      message: 'MOSAIC_SESSION_UID: "1000x" is not a numeric id',
    });
  });
  it("4294967294 is the largest id; 4294967295 (the kernel's -1) is refused", () => {
    expect(sessionIdentity(root, { MOSAIC_SESSION_UID: "4294967294", MOSAIC_SESSION_GID: "4294967294" })).toEqual({
      uid: 4294967294,
      gid: 4294967294,
    });
    expect(refusal(() => sessionIdentity(root, { MOSAIC_SESSION_GID: "4294967295" }))).toEqual({
      code: "session-identity",
      field: "MOSAIC_SESSION_GID",
      message: "MOSAIC_SESSION_GID: 4294967295 is not a valid id",
    });
  });
  it("dropToSession refuses a root caller's session uid 0 even with a non-zero gid", () => {
    expect(refusal(() => dropToSession({ uid: 0, session: { uid: 0, gid: 1000 } }))).toEqual({
      code: "session-identity",
      field: "hostFacts.session",
      message: "hostFacts.session: a root caller's session identity is uid or gid 0",
    });
  });
});

describe("planHandover: who needs a chown", () => {
  const id = { uid: 1000, gid: 2000 };
  const e = (path: string, kind: OwnedEntry["kind"], uid: number, gid: number, nlink = 1): OwnedEntry => ({
    path,
    kind,
    uid,
    gid,
    nlink,
  });
  it("an entry with only the session's uid, or only its gid, is still chowned", () => {
    expect(
      planHandover(id, [e("/ws/a", "file", 1000, 0), e("/ws/b", "file", 0, 2000), e("/ws/c", "file", 1000, 2000)]),
    ).toEqual(["/ws/a", "/ws/b"]);
  });
  it("a directory or link with many links is chowned; a file or other entry with many is refused", () => {
    expect(planHandover(id, [e("/ws", "dir", 0, 0, 5), e("/ws/l", "link", 0, 0, 2)])).toEqual(["/ws", "/ws/l"]);
    for (const kind of ["file", "other"] as const)
      expect(refusal(() => planHandover(id, [e("/ws/x", kind, 0, 0, 2)]))).toEqual({
        code: "handover-hardlink",
        field: "/ws/x",
        message:
          "/ws/x: has 2 hard links and belongs to 0:0; handing it to the session (1000:2000) would hand over its other names too. Remove the extra link or copy the file",
      });
  });
});

describe("renderArgvLines: one option per line", () => {
  it("an argv without -- ends at its last option, with no empty line after it", () => {
    expect(renderArgvLines(["--unshare-all", "--ro-bind", "/usr", "/usr"])).toEqual([
      "--unshare-all",
      "--ro-bind /usr /usr",
    ]);
  });
  it("only a tmpfs remounted read-only at its own path shares its line with the remount", () => {
    expect(
      renderArgvLines([
        "--tmpfs",
        "/a",
        "--remount-ro",
        "/a",
        "--dev",
        "/dev",
        "--remount-ro",
        "/dev",
        "--tmpfs",
        "/b",
        "--chdir",
        "/b",
        "--tmpfs",
        "/c",
        "--remount-ro",
        "/d",
      ]),
    ).toEqual([
      "--tmpfs /a --remount-ro /a",
      "--dev /dev",
      "--remount-ro /dev",
      "--tmpfs /b",
      "--chdir /b",
      "--tmpfs /c",
      "--remount-ro /d",
    ]);
  });
});

describe("the diagnosis table without the usual signs", () => {
  const seen = (over: Partial<ProbeSeen>): ProbeSeen => ({
    step: "--unshare-user",
    line: "bwrap: something failed",
    bwrapVersion: "bubblewrap 0.8.0",
    sysctls: {
      "kernel.apparmor_restrict_unprivileged_userns": null,
      "kernel.unprivileged_userns_clone": null,
      "user.max_user_namespaces": null,
    },
    bwrapSetuid: false,
    inContainer: false,
    ...over,
  });
  const idOf = (s: ProbeSeen) => {
    const d = diagnoseProbe(s);
    return d.kind === "known" ? d.row.id : "unknown";
  };
  it("bwrap versions with several digits in a part are read whole", () => {
    expect(bwrapVersionOf("bubblewrap 10.20.30")).toEqual([10, 20, 30]);
  });
  it("a bwrap with no --version line is not taken for an old one", () => {
    expect(idOf(seen({ bwrapVersion: null, line: "bwrap: the kernel does not support user namespaces" }))).toBe(
      "no-userns-kernel",
    );
    expect(idOf(seen({ bwrapVersion: null }))).toBe("unknown");
  });
  it("user.max_user_namespaces=0 names its row whatever bwrap said", () => {
    const sysctls = { ...seen({}).sysctls, "user.max_user_namespaces": 0 };
    expect(idOf(seen({ sysctls }))).toBe("max-user-namespaces");
  });
});
