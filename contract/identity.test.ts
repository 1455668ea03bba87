import { describe, expect, it } from "vitest";
import {
  DEFAULT_SESSION_IDENTITY,
  DEFAULT_SESSION_UIDS,
  dropToSession,
  pickSessionUid,
  planIdentity,
  planIdentityFiles,
  sessionIdentity,
  sessionUidRange,
} from "../src/core/sandbox/identity.ts";
import { planHandover, type OwnedEntry } from "../src/core/sandbox/handover.ts";
import { BIND_NEEDS, bindNeeds, reachProblem, type PathStat } from "../src/core/sandbox/reach.ts";
import { binds } from "../src/core/sandbox/binds.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixtureWorkspaceView } from "../src/conformance/worlds/host-fixtures.ts";
import { isMosaicError } from "../src/core/errors.ts";

const code = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return isMosaicError(e) ? `${e.code}: ${e.message}` : `not a MosaicError: ${String(e)}`;
  }
  return "no error";
};

describe("sessionIdentity: who a session runs as", () => {
  it("a user caller's sessions run as the caller, whatever the environment says", () => {
    expect(
      sessionIdentity({ uid: 1000, gid: 1000 }, { MOSAIC_SESSION_UID: "4242" }),
      "a user caller can give its session no other identity",
    ).toEqual({ uid: 1000, gid: 1000 });
  });
  it("a root caller's sessions run by default as uids of their own from a range no account owns, in nogroup; never as 0", () => {
    expect(sessionIdentity({ uid: 0, gid: 0 }, {}), "the range's first, in nogroup").toEqual({
      uid: DEFAULT_SESSION_UIDS.first,
      gid: 65534,
    });
    expect(sessionUidRange({ uid: 0 }, {}), "a uid each, from the default range").toEqual({
      first: 1879048192,
      count: 65536,
    });
    expect(DEFAULT_SESSION_IDENTITY.uid, "the default is not root").not.toBe(0);
    expect(sessionUidRange({ uid: 1000 }, { MOSAIC_SESSION_UIDS: "5000-5001" }), "a user caller has no range").toBe(
      null,
    );
  });
  it("MOSAIC_SESSION_UIDS names the range; MOSAIC_SESSION_UID is a range of one; both at once, or a bad range, is refused", () => {
    expect(sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "200000-200009" })).toEqual({ first: 200000, count: 10 });
    expect(sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UID: "997" })).toEqual({ first: 997, count: 1 });
    expect(code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UID: "997", MOSAIC_SESSION_UIDS: "1-2" }))).toBe(
      "session-identity: MOSAIC_SESSION_UIDS: set with MOSAIC_SESSION_UID: choose one",
    );
    expect(code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "0-9" }))).toMatch(/is 0: a root caller's/);
    expect(code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "9-5" }))).toBe(
      "session-identity: MOSAIC_SESSION_UIDS: 5 is below 9",
    );
    expect(code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "500" }))).toBe(
      'session-identity: MOSAIC_SESSION_UIDS: "500" is not first-last',
    );
  });
  it("pickSessionUid: the run's own starting point, skipping every uid a live session holds; none free is refused", () => {
    const range = { first: 1000, count: 4 };
    const mine = pickSessionUid(range, [], "run-a");
    expect(mine).toBeGreaterThanOrEqual(1000);
    expect(mine).toBeLessThan(1004);
    expect(pickSessionUid(range, [], "run-a"), "the same run starts at the same place").toBe(mine);
    const next = pickSessionUid(range, [mine], "run-a");
    expect(next, "a held uid is never given to a second session").not.toBe(mine);
    expect(pickSessionUid(range, [1000, 1001, 1002], "run-a"), "the one left").toBe(1003);
    expect(code(() => pickSessionUid(range, [1000, 1001, 1002, 1003], "run-a"))).toBe(
      "session-uid-busy: MOSAIC_SESSION_UIDS: every uid of 1000-1003 runs a session: no uid of its own for another",
    );
    const many = new Set(Array.from({ length: 50 }, (_, i) => pickSessionUid({ first: 1, count: 65536 }, [], `r${i}`)));
    expect(many.size, "runs spread over the range").toBeGreaterThan(45);
  });
  it("planIdentityFiles: root and the session's user, its HOME the run's; nothing of the host's accounts", () => {
    expect(planIdentityFiles({ uid: 1879048200, gid: 65534 }, "/data/runs/r/home")).toEqual({
      passwd:
        "root:x:0:0:root:/root:/usr/sbin/nologin\nsession:x:1879048200:65534:mosaic session:/data/runs/r/home:/bin/sh\n",
      group: "root:x:0:\nsession:x:65534:\n",
    });
  });
  it("MOSAIC_SESSION_UID and MOSAIC_SESSION_GID choose a dedicated system user", () => {
    expect(sessionIdentity({ uid: 0, gid: 0 }, { MOSAIC_SESSION_UID: "997", MOSAIC_SESSION_GID: "996" })).toEqual({
      uid: 997,
      gid: 996,
    });
  });
  it("a bad value is refused naming the variable: 0, a name, a negative number, one too large", () => {
    expect(code(() => sessionIdentity({ uid: 0, gid: 0 }, { MOSAIC_SESSION_UID: "0" }))).toBe(
      "session-identity: MOSAIC_SESSION_UID: is 0: a root caller's sessions must never run as uid or gid 0",
    );
    expect(code(() => sessionIdentity({ uid: 0, gid: 0 }, { MOSAIC_SESSION_GID: "0" }))).toBe(
      "session-identity: MOSAIC_SESSION_GID: is 0: a root caller's sessions must never run as uid or gid 0",
    );
    expect(code(() => sessionIdentity({ uid: 0, gid: 0 }, { MOSAIC_SESSION_UID: "nobody" }))).toBe(
      'session-identity: MOSAIC_SESSION_UID: "nobody" is not a numeric id',
    );
    expect(code(() => sessionIdentity({ uid: 0, gid: 0 }, { MOSAIC_SESSION_UID: "-5" }))).toBe(
      'session-identity: MOSAIC_SESSION_UID: "-5" is not a numeric id',
    );
    expect(code(() => sessionIdentity({ uid: 0, gid: 0 }, { MOSAIC_SESSION_UID: "4294967295" }))).toBe(
      "session-identity: MOSAIC_SESSION_UID: 4294967295 is not a valid id",
    );
  });
  it("dropToSession: setpriv for a root caller, nothing for a user; a root identity in the facts is refused", () => {
    expect(dropToSession({ uid: 0, session: { uid: 65534, gid: 65534 } })).toEqual([
      "setpriv",
      "--reuid=65534",
      "--regid=65534",
      "--clear-groups",
      "--",
    ]);
    expect(dropToSession({ uid: 1000, session: { uid: 1000, gid: 1000 } })).toEqual([]);
    expect(
      code(() => dropToSession({ uid: 0, session: { uid: 0, gid: 0 } })),
      "facts built by hand with a root session identity never run",
    ).toMatch(/^session-identity: hostFacts.session: /);
    expect(
      code(() => dropToSession({ uid: 0, session: { uid: 65534, gid: 0 } })),
      "nor with gid 0",
    ).toMatch(/^session-identity: /);
  });
});

describe("planHandover: what the launcher chowns for a root caller's session", () => {
  const id = { uid: 65534, gid: 65534 };
  const e = (path: string, kind: OwnedEntry["kind"], uid: number, nlink = 1): OwnedEntry => ({
    path,
    kind,
    uid,
    gid: uid,
    nlink,
  });
  it("everything not yet the session's, links themselves (never followed)", () => {
    expect(
      planHandover(id, [e("/ws", "dir", 0), e("/ws/a", "file", 65534), e("/ws/l", "link", 0), e("/ws/b", "file", 0)]),
    ).toEqual(["/ws", "/ws/l", "/ws/b"]);
  });
  it("refuses a file with another hard link: the chown would hand over its other name too", () => {
    expect(code(() => planHandover(id, [e("/ws", "dir", 0), e("/ws/shadow", "file", 0, 2)]))).toMatch(
      /^handover-hardlink: \/ws\/shadow: has 2 hard links and belongs to 0:0/,
    );
    expect(
      planHandover(id, [e("/ws/own", "file", 65534, 2)]),
      "a linked file already the session's needs nothing",
    ).toEqual([]);
  });
});

describe("reachProblem: whether the session's identity can use a bind's source", () => {
  const id = { uid: 65534, gid: 65534 };
  const st = (path: string, kind: PathStat["kind"], mode: number, uid = 0, gid = 0): PathStat => ({
    path,
    kind,
    mode,
    uid,
    gid,
  });
  const chain = (last: PathStat, ...dirs: PathStat[]) => [st("/", "dir", 0o755), ...dirs, last];
  it("a world-readable file under world-searchable directories", () => {
    expect(reachProblem(id, chain(st("/srv/f", "file", 0o644), st("/srv", "dir", 0o755)), "read")).toBeNull();
  });
  it("the parent of a tree the launcher hands over must itself be enterable", () => {
    expect(reachProblem(id, chain(st("/data/locked", "dir", 0o700), st("/data", "dir", 0o755)), "search")).toBe(
      "uid 65534 cannot enter /data/locked (mode 0700, owner 0:0)",
    );
    expect(reachProblem(id, chain(st("/data/open", "dir", 0o711), st("/data", "dir", 0o755)), "search")).toBeNull();
  });
  it("a directory it cannot enter names the directory, its mode and owner", () => {
    expect(
      reachProblem(
        id,
        chain(st("/root/repo/f", "file", 0o644), st("/root", "dir", 0o700), st("/root/repo", "dir", 0o755)),
        "read",
      ),
    ).toBe("uid 65534 cannot enter /root (mode 0700, owner 0:0)");
  });
  it("group and owner bits count for the identity's gid and uid", () => {
    expect(
      reachProblem(id, chain(st("/d/f", "file", 0o640, 0, 65534), st("/d", "dir", 0o750, 0, 65534)), "read"),
      "by group",
    ).toBeNull();
    expect(
      reachProblem(id, chain(st("/d/f", "file", 0o600, 65534, 1), st("/d", "dir", 0o700, 65534, 1)), "write"),
      "by owner",
    ).toBeNull();
  });
  it("a socket it may not write cannot be connected to", () => {
    expect(reachProblem(id, chain(st("/run/bus.sock", "socket", 0o755), st("/run", "dir", 0o755)), "connect")).toBe(
      "uid 65534 cannot connect to /run/bus.sock (mode 0755, owner 0:0)",
    );
    expect(
      reachProblem(id, chain(st("/run/bus.sock", "socket", 0o777), st("/run", "dir", 0o755)), "connect"),
    ).toBeNull();
  });
  it("an execute-only node is enough to run it; a missing source is named", () => {
    expect(reachProblem(id, chain(st("/s/node", "file", 0o111), st("/s", "dir", 0o755)), "exec")).toBeNull();
    expect(reachProblem(id, [st("/x", "missing", 0)], "search")).toBe("/x does not exist");
  });
  it("a workspace it does not own cannot be worked in", () => {
    expect(reachProblem(id, chain(st("/ws", "dir", 0o755)), "write")).toBe(
      "uid 65534 cannot write /ws (mode 0755, owner 0:0)",
    );
  });
  it("every bind with a host source is checked, with the row's need", () => {
    const { spec } = ROLE_CASES["claude-pm"]!;
    const facts = HOST_LAYOUTS["root-caller"]!.facts;
    const table = binds(spec, facts, fixtureWorkspaceView(spec));
    const needs = bindNeeds(table);
    const of = (src: string) => needs.find((n) => n.source === src)?.need;
    expect(
      [
        of(spec.workspace),
        of(spec.runDir),
        of(spec.brokerSocket),
        of(spec.launchSocket),
        of(facts.runnerNode),
        of(spec.runner),
      ],
      "the workspace and run are written, the sockets connected to, the runner's node run, its files read",
    ).toEqual(["write", "write", "connect", "connect", "exec", "read"]);
    const handed = bindNeeds(table, [spec.workspace, spec.runDir]);
    expect(
      handed.some((n) => n.source.startsWith(spec.workspace) || n.source.startsWith(spec.runDir)),
      "what the launcher hands over is not checked before it is the identity's",
    ).toBe(false);
    expect(
      handed
        .filter((n) => n.source === "/srv/mosaic-data/workspaces/acme" || n.source === "/srv/mosaic-data/runs")
        .map((n) => n.need),
      "their parents must be searchable",
    ).toEqual(["search", "search"]);
    expect(
      Object.values(BIND_NEEDS).every((n) => n!.why.length > 0),
      "every need says why",
    ).toBe(true);
  });
});

describe("sessionUidRange and planIdentity: the range's edges", () => {
  it("MOSAIC_SESSION_UIDS is first-last and nothing around it; first-first is a range of one", () => {
    for (const raw of ["x5000-5001", "5000-5001x", " 5000-5001", "5000-5001 "])
      expect(
        code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: raw })),
        raw,
      ).toBe(`session-identity: MOSAIC_SESSION_UIDS: ${JSON.stringify(raw)} is not first-last`);
    expect(
      code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "5000-5000" })),
      "5000-5000",
    ).toBe("no error");
    expect(sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "5000-5000" })).toEqual({ first: 5000, count: 1 });
  });
  it("a bad first or last of MOSAIC_SESSION_UIDS is refused naming the variable", () => {
    expect(code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "0-9" }))).toBe(
      "session-identity: MOSAIC_SESSION_UIDS: is 0: a root caller's sessions must never run as uid or gid 0",
    );
    expect(code(() => sessionUidRange({ uid: 0 }, { MOSAIC_SESSION_UIDS: "1-4294967295" }))).toBe(
      "session-identity: MOSAIC_SESSION_UIDS: 4294967295 is not a valid id",
    );
  });
  it("planIdentity: a root caller's facts without a range run the session as their own identity", () => {
    const trees = { workspace: "/ws", runDir: "/run" };
    const facts = { uid: 0, session: { uid: 997, gid: 996 } };
    expect(
      code(() => planIdentity(facts, trees, "r1")),
      "a uid to run as",
    ).toBe("no error");
    const p = planIdentity(facts, trees, "r1");
    expect(p.runAs).toEqual({ uid: 997, gid: 996 });
    expect(p.drop).toEqual(["setpriv", "--reuid=997", "--regid=996", "--clear-groups", "--"]);
  });
  it("planIdentity: a uid a live session holds is never a second session's", () => {
    const trees = { workspace: "/ws", runDir: "/run" };
    const facts = { uid: 0, session: { uid: 997, gid: 996 }, sessionUids: { first: 1000, count: 2 } };
    expect(planIdentity({ ...facts, heldSessionUids: [1000] }, trees, "r1").runAs.uid).toBe(1001);
    expect(planIdentity({ ...facts, heldSessionUids: [1001] }, trees, "r1").runAs.uid).toBe(1000);
  });
});
