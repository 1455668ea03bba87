// src/core/sandbox/bwrap-options.ts: bwrap's options described once. The table is checked against
// every pinned bwrap (baselines/bwrap/), and each reader (the argv renderer, the review's parser
// and its hardening and widening rules) is shown reading it.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { BWRAP_OPTIONS, operandsOf, optionOf } from "../src/core/sandbox/bwrap-options.ts";
import { renderArgvLines } from "../src/core/sandbox/render.ts";
import { parseBwrapArgv } from "../src/review/parse-bwrap-argv.ts";
import { BWRAP_HARDENING, BWRAP_WIDENING, mountWidth } from "../src/review/rules.ts";

const DIR = join(REPO_ROOT, "baselines/bwrap");
const pinned = readdirSync(DIR)
  .filter((f) => f.endsWith(".json"))
  .map((f) => JSON.parse(readFileSync(join(DIR, f), "utf8")) as { version: string; options: string[] });

describe("bwrap's option table", () => {
  it("holds every option a pinned bwrap has, and none that no pinned bwrap has", () => {
    expect(pinned.length).toBeGreaterThanOrEqual(2);
    const any = new Set(pinned.flatMap((p) => p.options));
    expect(Object.keys(BWRAP_OPTIONS).filter((o) => !any.has(o))).toEqual([]);
    expect([...any].filter((o) => !Object.hasOwn(BWRAP_OPTIONS, o))).toEqual([]);
  });

  it("the options that confine are the namespaces, --cap-drop, the user-namespace lock, --new-session and the seccomp filters; those that widen are the network, capabilities, joined namespaces and --die-with-parent", () => {
    const confining = Object.entries(BWRAP_OPTIONS).flatMap(([n, o]) => (o.confines ? [n] : []));
    expect(confining.sort()).toEqual(
      [
        "--unshare-all",
        "--unshare-user",
        "--unshare-user-try",
        "--unshare-ipc",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-uts",
        "--unshare-cgroup",
        "--unshare-cgroup-try",
        "--disable-userns",
        "--assert-userns-disabled",
        "--seccomp",
        "--add-seccomp-fd",
        "--new-session",
        "--cap-drop",
      ].sort(),
    );
    const widening = Object.entries(BWRAP_OPTIONS).flatMap(([n, o]) => (o.widens ? [n] : []));
    expect(widening.sort()).toEqual(
      ["--share-net", "--userns", "--userns2", "--pidns", "--die-with-parent", "--cap-add"].sort(),
    );
  });

  it("a name bwrap does not have, an inherited property's among them, has no row and no operands", () => {
    for (const name of ["constructor", "__proto__", "toString", "--no-such-option"]) {
      expect(optionOf(name), name).toBeUndefined();
      expect(operandsOf(name), name).toBe(0);
    }
  });
});

describe("its readers", () => {
  it("the renderer puts each option with its operands on one line, and a modifier on the line of the mount it modifies", () => {
    const argv = ["--uid", "65534", "--hostname", "s", "--perms", "0700", "--size", "4096", "--tmpfs", "/tmp"];
    expect(renderArgvLines([...argv, "--chmod", "0755", "/x", "--unshare-net", "--", "node", "r.ts"])).toEqual([
      "--uid 65534",
      "--hostname s",
      "--perms 0700 --size 4096 --tmpfs /tmp",
      "--chmod 0755 /x",
      "--unshare-net",
      "-- node r.ts",
    ]);
  });

  it("the review reads each mount row as a mount of its width, with its modifiers as fields, and a name with no row as none", () => {
    const facts = parseBwrapArgv(
      "--perms 0700 --size 4096 --tmpfs /tmp\n--ro-bind-fd 5 /ro\n--bind-fd 6 /rw\n--dev-bind /dev /dev\n--chmod 0755 /x\n-- node r.ts\n",
    );
    const mounts = facts.filter((f) => f.type === "bwrap-mount");
    expect(mounts.map((f) => [f.key, f.fields.option, mountWidth(f)])).toEqual([
      ["/tmp", "--tmpfs", 0],
      ["/ro", "--ro-bind-fd", 1],
      ["/rw", "--bind-fd", 2],
      ["/dev", "--dev-bind", 3],
    ]);
    expect(mounts[0]!.fields).toMatchObject({ perms: "0700", size: "4096" });
    expect(mountWidth({ type: "bwrap-mount", key: "/x", fields: { option: "constructor" } } as never)).toBe(-1);
    // An option with a row but no mount (a hand-made fact: the parser makes mounts of mount rows only).
    expect(mountWidth({ type: "bwrap-mount", key: "/x", fields: { option: "--chmod" } } as never)).toBe(-1);
  });

  it("the review's hardening and widening rules match exactly the rows that confine and widen, each under its row's rule", () => {
    for (const [name, o] of Object.entries(BWRAP_OPTIONS)) {
      const hard = BWRAP_HARDENING.filter((h) => h.key.test(name));
      const wide = BWRAP_WIDENING.filter((w) => w.key.test(name));
      expect(
        hard.map((h) => [h.id, h.why]),
        name,
      ).toEqual(o.confines ? [[o.confines.rule, o.confines.why]] : []);
      expect(
        wide.map((w) => w.why),
        name,
      ).toEqual(o.widens ? [o.widens] : []);
    }
    expect(BWRAP_HARDENING.some((h) => h.key.test("--unshare-netx") || h.key.test("x--unshare-net"))).toBe(false);
  });
});
