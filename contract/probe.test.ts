import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { HOST_LAYOUTS } from "../src/conformance/host-fixtures.ts";

// Fake bwraps: shell scripts standing in for the binary, so the probe's reading of success,
// failure and absence is checked without bwrap. The live tier runs the real one.
const dir = mkdtempSync(join(tmpdir(), "mosaic-probe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeBwrap(name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

const facts = HOST_LAYOUTS["merged-usr"]!.facts;

describe("sandboxProblem", () => {
  it("a bwrap that fails refuses with the first line of its stderr", () => {
    const bwrap = fakeBwrap("failing", `echo "" >&2; echo "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; echo second >&2; exit 1`);
    expect(sandboxProblem(facts, bwrap)).toBe("bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.");
  });
  it("a failing bwrap with no message still refuses", () => {
    expect(sandboxProblem(facts, fakeBwrap("silent", "exit 1"))).toBe("bwrap exited 1 with no message");
  });
  it("a missing bwrap says so and how to get it", () => {
    const p = sandboxProblem(facts, join(dir, "no-such-bwrap"));
    expect(p).toMatch(/^bwrap is missing \(.*no-such-bwrap not found\): install it with `apt-get install bubblewrap`/);
  });
  it("positive control: a bwrap that succeeds is no problem, and it got the namespaces and system binds", () => {
    const log = join(dir, "argv.txt");
    const bwrap = fakeBwrap("ok", `printf '%s\\n' "$@" > "${log}"; exit 0`);
    expect(sandboxProblem(facts, bwrap)).toBeNull();
    const argv = readFileSync(log, "utf8").trim().split("\n");
    expect(argv).toEqual([
      "--unshare-user", "--unshare-pid", "--unshare-ipc", "--as-pid-1",
      "--ro-bind", "/usr", "/usr",
      "--symlink", "usr/bin", "/bin", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin",
      "--ro-bind", "/etc", "/etc", "--dev", "/dev", "--proc", "/proc",
      "--", "true",
    ]);
  });
});
