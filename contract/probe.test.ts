import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { probeSteps } from "../src/core/sandbox/probe-plan.ts";
import { HARDENING } from "../src/core/sandbox/bwrap-argv.ts";
import { HOST_LAYOUTS } from "../src/conformance/worlds/host-fixtures.ts";

// Fake bwraps: shell scripts standing in for the binary, so the probe's reading of success,
// failure, absence, a hang and a file that cannot be executed is checked without bwrap. The live
// tier runs the real one. The fake node is a small file, so the runner-node copy stays cheap.
const dir = mkdtempSync(join(tmpdir(), "mosaic-probe-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeBwrap(name: string, body: string, mode = 0o755): string {
  const p = join(dir, name);
  writeFileSync(p, `#!/bin/sh\n${body}\n`);
  chmodSync(p, mode);
  return p;
}

const fakeNode = join(dir, "node");
writeFileSync(fakeNode, "#!/bin/sh\nexit 0\n");
chmodSync(fakeNode, 0o755);
const stateDir = join(dir, "state");
const facts = {
  ...HOST_LAYOUTS["merged-usr"]!.facts,
  node: { path: fakeNode, realPath: fakeNode },
  runnerNode: join(stateDir, "runner-node/node-test"),
  uid: 1000,
  session: { uid: 1000, gid: 1000 },
  cgroups: { pids: null, memory: null },
};
/** The host as the diagnosis reads it: no container, no restricting sysctl, an ordinary bwrap. */
const host = {
  bwrapVersion: "bubblewrap 0.8.0",
  sysctls: {
    "kernel.apparmor_restrict_unprivileged_userns": null,
    "kernel.unprivileged_userns_clone": null,
    "user.max_user_namespaces": 63432,
  },
  bwrapSetuid: false,
  inContainer: false,
};
const probe = (bwrap: string, timeoutMs?: number, on = host) =>
  sandboxProblem(facts, { bwrap, stateDir, host: on, ...(timeoutMs !== undefined ? { timeoutMs } : {}) });

describe("sandboxProblem", () => {
  it("a bwrap that fails names the first step it fails and bwrap's first stderr line", () => {
    const bwrap = fakeBwrap(
      "failing",
      `echo "" >&2; echo "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces." >&2; echo second >&2; exit 1`,
    );
    const said =
      "bwrap cannot apply the namespaces (--unshare-user --unshare-pid --unshare-ipc --unshare-net --unshare-uts --unshare-cgroup --as-pid-1) here: bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces.";
    expect(probe(bwrap), "on a bare host no row can tell why: unknown, with bwrap's line").toBe(
      `an unknown cause: ${said} (no row of the diagnosis table names it)`,
    );
    expect(probe(bwrap, undefined, { ...host, inContainer: true }), "in a container: its seccomp profile").toMatch(
      /^the container's seccomp profile blocks the namespace system calls .*: run the container with a seccomp profile that allows them/,
    );
    expect(probe(bwrap, undefined, { ...host, inContainer: true })).toContain(`(${said})`);
  });
  it("a bwrap that lacks one hardening option names that option: no weaker sandbox is tried instead", () => {
    const bwrap = fakeBwrap(
      "no-disable-userns",
      `for a in "$@"; do [ "$a" = --disable-userns ] && { echo "bwrap: Unknown option --disable-userns" >&2; exit 1; }; done; exit 0`,
    );
    expect(probe(bwrap)).toBe(
      "bubblewrap is older than 0.8.0, so it has no --disable-userns: install bubblewrap 0.8.0 or newer (Debian 12 and Ubuntu 24.04 ship it; Debian 11 has 0.4.1: take bookworm's package) (bwrap cannot apply --disable-userns here: bwrap: Unknown option --disable-userns)",
    );
  });
  it("a failing bwrap with no message still refuses", () => {
    expect(probe(fakeBwrap("silent", "exit 1"))).toMatch(
      /^an unknown cause: .* here: bwrap exited 1 with no message \(no row of the diagnosis table names it\)$/,
    );
  });
  it("a missing bwrap says so and how to get it", () => {
    expect(probe(join(dir, "no-such-bwrap"))).toMatch(
      /^bwrap is missing \(.*no-such-bwrap not found\): install it with `apt-get install bubblewrap`/,
    );
  });
  it("a bwrap that cannot be executed refuses and names it", () => {
    const p = probe(fakeBwrap("not-executable", "exit 0", 0o644));
    expect(p).toMatch(/^bwrap could not be run \(.*not-executable\): .*EACCES/);
  });
  it("a bwrap that hangs refuses after the timeout, and leaves nothing running", () => {
    const pidFile = join(dir, "hang.pid");
    const p = probe(fakeBwrap("hangs", `echo $$ > "${pidFile}"; exec sleep 30`), 300);
    expect(p).toMatch(/did not finish within 0.3 s$/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(() => process.kill(pid, 0), "the hung bwrap was killed").toThrow();
  });
  it("positive control: a bwrap that succeeds is no problem, and got exactly the session's hardening", () => {
    const log = join(dir, "argv.txt");
    const bwrap = fakeBwrap("ok", `printf '%s\\n' "$@" > "${log}"; exit 0`);
    expect(probe(bwrap)).toBeNull();
    const argv = readFileSync(log, "utf8").trim().split("\n");
    expect(argv, "the probe ran the last, complete step").toEqual(probeSteps(facts).at(-1)!.args);
    for (const h of HARDENING)
      expect(argv.join(" "), `the probe applies ${h.args.join(" ")}`).toContain(h.args.join(" "));
    expect(argv.slice(argv.indexOf("--") + 1)).toEqual([
      "setpriv",
      "--pdeathsig",
      "KILL",
      "--",
      "prlimit",
      "--nproc=512",
      `--data=${2048 * 1024 * 1024}`,
      "--",
      facts.runnerNode,
      "-e",
      "0",
    ]);
    expect(existsSync(facts.runnerNode)).toBe(true);
    expect(statSync(facts.runnerNode).mode & 0o777, "the runner's node is execute-only").toBe(0o111);
  });
  it("a root host with no pids cgroup refuses before running bwrap", () => {
    const log = join(dir, "root-argv.txt");
    const bwrap = fakeBwrap("ok-root", `touch "${log}"; exit 0`);
    const problem = sandboxProblem(
      {
        ...facts,
        uid: 0,
        session: { uid: 65534, gid: 65534 },
        cgroups: { pids: null, memory: { dir: "/sys/fs/cgroup/memory/x", version: 1 } },
      },
      { bwrap, stateDir },
    );
    expect(problem, "a refusal, not a launch").not.toBeNull();
    expect(problem).toMatch(/^running as root, a session's tasks are bounded by a pids cgroup too/);
    expect(existsSync(log), "bwrap never ran").toBe(false);
  });
  it("a root host with no memory cgroup refuses before running bwrap", () => {
    const log = join(dir, "root-argv-mem.txt");
    const bwrap = fakeBwrap("ok-root-mem", `touch "${log}"; exit 0`);
    const problem = sandboxProblem(
      {
        ...facts,
        uid: 0,
        session: { uid: 65534, gid: 65534 },
        cgroups: { pids: { dir: "/sys/fs/cgroup/pids/x", version: 1 }, memory: null },
      },
      { bwrap, stateDir },
    );
    expect(problem, "a refusal, not a launch").not.toBeNull();
    expect(problem).toMatch(/^running as root, a session's memory as a whole is bounded by a memory cgroup/);
    expect(existsSync(log), "bwrap never ran").toBe(false);
  });
  it("an architecture with no seccomp filter refuses", () => {
    expect(sandboxProblem({ ...facts, arch: "riscv64" }, { bwrap: "/bin/true", stateDir })).toBe(
      "no seccomp filter is written for riscv64; sessions run on x64 and arm64 only",
    );
  });
});
