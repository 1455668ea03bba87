import { describe, expect, it } from "vitest";
import type { FsView } from "../src/core/gate/fs-view.ts";
import { binds } from "../src/core/sandbox/binds.ts";
import { parseSandboxSpec } from "../src/core/sandbox/spec-schema.ts";
import { MosaicError } from "../src/core/errors.ts";
import { MAX_SOCKET_PATH_BYTES } from "../src/core/paths.ts";
import { runSockets } from "../src/core/runner/run-paths.ts";
import type { SandboxSpec } from "../src/core/sandbox/types.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixtureWorkspaceView } from "../src/conformance/worlds/host-fixtures.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";

const facts = HOST_LAYOUTS["merged-usr"]!.facts;
const good = ROLE_CASES["pi-coder"]!.spec;
/** Spec errors come before any look at the workspace: a view with nothing in it will do. */
const EMPTY_WORKSPACE: FsView = { lstat: () => ({ kind: "missing" }) };

/** Each bad spec, the field the error must name, and its code. */
const BAD: ReadonlyArray<
  [name: string, patch: Partial<Record<keyof SandboxSpec, unknown>>, field: string, code: string]
> = [
  ["relative workspace", { workspace: "work/ws" }, "workspace", "not-normal-absolute"],
  ["non-normalised run dir", { runDir: "/srv/mosaic-data/runs/../runs/r1" }, "runDir", "not-normal-absolute"],
  ["trailing slash", { workspace: "/srv/ws/" }, "workspace", "not-normal-absolute"],
  ["double slash", { adapter: "/srv//a.sh" }, "adapter", "not-normal-absolute"],
  ["newline in a path", { workspace: "/srv/ws\n--bind / /" }, "workspace", "control-char"],
  ["NUL in a path", { runDir: "/srv/run\0x" }, "runDir", "control-char"],
  [
    "newline in a runner file",
    { runnerFiles: ["/srv/mosaic/src/host/runner.ts", "/srv/a\nb"] },
    "runnerFiles[1]",
    "control-char",
  ],
  ["workspace inside the run dir", { workspace: `${good.runDir}/ws` }, "workspace", "workspace-in-run"],
  ["run dir inside the workspace", { runDir: `${good.workspace}/run` }, "runDir", "run-in-workspace"],
  ["same workspace and run dir", { runDir: good.workspace }, "workspace", "workspace-in-run"],
  ["missing broker socket", { brokerSocket: undefined }, "brokerSocket", "missing-field"],
  ["empty broker socket", { brokerSocket: "" }, "brokerSocket", "missing-field"],
  ["missing launch socket", { launchSocket: undefined }, "launchSocket", "missing-field"],
  ["mayLaunch not a boolean", { mayLaunch: "yes" }, "mayLaunch", "missing-field"],
  ["unknown harness", { harness: "codex" }, "harness", "unknown-harness"],
  ["workspace under /tmp", { workspace: "/tmp/ws" }, "workspace", "under-tmp"],
  ["run dir under /tmp", { runDir: "/tmp/run" }, "runDir", "under-tmp"],
  ["adapter under /tmp", { adapter: "/tmp/mosaic/adapter.sh" }, "adapter", "under-tmp"],
  ["broker socket under /tmp", { brokerSocket: "/tmp/bus.sock" }, "brokerSocket", "under-tmp"],
  ["workspace is the host HOME", { workspace: "/home/founder" }, "workspace", "contains-home"],
  ["run dir holds the host HOME", { runDir: "/home" }, "runDir", "contains-home"],
  ["runner not among the runner files", { runner: "/srv/mosaic/src/other.ts" }, "runner", "runner-not-bound"],
  [
    "run dir whose sockets would pass 107 bytes",
    { runDir: `/srv/mosaic-data/runs/${"r".repeat(70)}` },
    "runDir",
    "socket-path-too-long",
  ],
  [
    "broker socket of 108 bytes",
    { brokerSocket: `/srv/${"b".repeat(98)}.sock` },
    "brokerSocket",
    "socket-path-too-long",
  ],
];

function attempt(spec: SandboxSpec): MosaicError {
  try {
    binds(spec, facts, EMPTY_WORKSPACE);
  } catch (e) {
    if (e instanceof MosaicError) return e;
    throw e;
  }
  return expect.unreachable("binds() accepted a bad spec and returned a table");
}

describe("a bad spec gets a typed error naming the field, and no binds", () => {
  it.each(BAD)("%s", (_name, patch, field, code) => {
    const e = attempt({ ...good, ...patch } as SandboxSpec);
    expect({ code: e.code, field: e.field }).toEqual({ code, field });
    expect(e.message.startsWith(`${field}: `)).toBe(true);
  });

  it("golden: every refusal's code and message", async () => {
    const lines = BAD.map(([name, patch]) => {
      const e = attempt({ ...good, ...patch } as SandboxSpec);
      return `${name} → ${e.code}: ${e.message}`;
    });
    await matchGolden("sandbox", "spec-errors", "txt", "bad sandbox specs and the error each gets", lines.join("\n"));
  });
});

describe("socket paths at the kernel's limit", () => {
  it("a run dir whose tools.sock is exactly 107 bytes plans; one byte more is refused", () => {
    const runDir = (n: number) =>
      `/srv/mosaic-data/runs/${"r".repeat(n - "/srv/mosaic-data/runs//sock/tools.sock".length)}`;
    const fits = { ...good, runDir: runDir(MAX_SOCKET_PATH_BYTES) };
    expect(runSockets(fits.runDir).tools.length).toBe(MAX_SOCKET_PATH_BYTES);
    expect(binds(fits, facts, fixtureWorkspaceView(fits)).length, "107 bytes fits").toBeGreaterThan(0);
    expect(attempt({ ...good, runDir: runDir(MAX_SOCKET_PATH_BYTES + 1) })).toMatchObject({
      code: "socket-path-too-long",
      field: "runDir",
    });
  });
  it("bytes, not characters: a run dir of multi-byte names is measured in UTF-8", () => {
    const runDir = `/srv/mosaic-data/runs/${"é".repeat(40)}`;
    expect(runSockets(runDir).tools.length, "under 107 characters").toBeLessThan(MAX_SOCKET_PATH_BYTES);
    expect(attempt({ ...good, runDir })).toMatchObject({ code: "socket-path-too-long", field: "runDir" });
  });
});

describe("host facts the sandbox cannot honour", () => {
  it("node under /tmp is refused: the private /tmp would hide it", () => {
    const onTmp = {
      ...facts,
      node: { path: "/tmp/ci/node_modules/node/bin/node", realPath: "/tmp/ci/node_modules/node/bin/node" },
    };
    expect(() => binds(good, onTmp, fixtureWorkspaceView(good))).toThrowError(
      expect.objectContaining({ code: "under-tmp", field: "hostFacts.node" }),
    );
    expect(
      binds(good, facts, fixtureWorkspaceView(good)).length,
      "positive control: the same spec with node outside /tmp plans",
    ).toBeGreaterThan(0);
  });
  it("the runner's node under /tmp is refused too", () => {
    expect(() =>
      binds(good, { ...facts, runnerNode: "/tmp/state/runner-node/node" }, fixtureWorkspaceView(good)),
    ).toThrowError(expect.objectContaining({ code: "under-tmp", field: "hostFacts.runnerNode" }));
  });
});

describe("parseSandboxSpec", () => {
  it("accepts a good document", () => {
    expect(parseSandboxSpec(JSON.parse(JSON.stringify(good)))).toEqual(JSON.parse(JSON.stringify(good)));
  });
  it.each([
    ["a missing field", { ...good, workspace: undefined }, "workspace"],
    ["a number for a path", { ...good, runDir: 7 }, "runDir"],
    ["an unknown key", { ...good, extra: 1 }, "(spec)"],
    ["an empty runner list", { ...good, runnerFiles: [] }, "runnerFiles"],
  ])("names the field for %s", (_n, doc, field) => {
    expect(() => parseSandboxSpec(JSON.parse(JSON.stringify(doc)))).toThrowError(expect.objectContaining({ field }));
  });
});
