// The matrix's containers, through testcontainers: one container per host row, the checkout bound
// read-only at its own path (so node_modules' node and the CLIs run as they do on the host), the
// run and scratch directories as tmpfs, no network (sessions need loopback only).
import { appendFileSync, copyFileSync, existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { baseOf, imageSourceOf, imageTag } from "./bases.ts";
import type { HostRow } from "./hosts.ts";

export const PODMAN_SOCKET = "/run/podman/podman.sock";
/** Every container the matrix starts carries it: scripts/matrix.ts removes them by it. */
export const MATRIX_LABEL = "mosaic-matrix";
/** Each container's id, one per line, as it starts: scripts/matrix.ts stops them and their helpers by it. */
export const CONTAINER_IDS = join(REPO_ROOT, ".scratch/matrix/containers");
/** The unprivileged uid the user arm runs as inside each container. */
export const USER = "1000:1000";

/**
 * podman's API where no DOCKER_HOST names an engine, and Ryuk off: its image cannot be pulled
 * here, and scripts/matrix.ts removes the matrix's containers by id.
 */
function useEngine(): void {
  process.env.DOCKER_HOST ||= `unix://${PODMAN_SOCKET}`;
  process.env.TESTCONTAINERS_RYUK_DISABLED ??= "true";
}

const engine = () => (process.env.DOCKER_HOST === `unix://${PODMAN_SOCKET}` ? "podman" : "docker");

/** Why the matrix cannot run here, or null: scripts/matrix.ts says when the runtime did not start. */
export async function runtimeProblem(): Promise<string | null> {
  useEngine();
  if (process.env.MATRIX_RUNTIME_PROBLEM)
    return `the container runtime did not start: ${process.env.MATRIX_RUNTIME_PROBLEM}`;
  try {
    const { getContainerRuntimeClient } = await import("testcontainers");
    await getContainerRuntimeClient();
    return null;
  } catch (e) {
    return `no container runtime answers at ${process.env.DOCKER_HOST} (run npm run test:matrix, which starts podman): ${(e as Error).message.split("\n")[0]}`;
  }
}

/** A seccomp profile like Docker's default where bwrap meets it: the namespace calls refused with EPERM. */
export const SECCOMP_BLOCKS_USERNS = JSON.stringify({
  defaultAction: "SCMP_ACT_ALLOW",
  syscalls: [
    { names: ["unshare"], action: "SCMP_ACT_ERRNO", errnoRet: 1 },
    {
      names: ["clone"],
      action: "SCMP_ACT_ERRNO",
      errnoRet: 1,
      args: [{ index: 0, value: 0x10000000, valueTwo: 0x10000000, op: "SCMP_CMP_MASKED_EQ" }],
    },
    // glibc falls back to clone when clone3 is missing; its flags sit in memory a filter cannot read.
    { names: ["clone3"], action: "SCMP_ACT_ERRNO", errnoRet: 38 },
  ],
});

function seccompFile(): string {
  const file = join(REPO_ROOT, ".scratch/matrix/seccomp-blocks-userns.json");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, SECCOMP_BLOCKS_USERNS);
  return file;
}

/** The restriction a row adds, lifted: a positive control's container differs only in it. */
export type Lift = "none" | "restriction";

export const OPT_NODE = "/opt/node/bin/node";
export const OPT_CLAUDE = "/opt/claude/bin/claude";

/** PATH and the Claude Code binary as the row's host has them. */
export function hostEnv(row: HostRow): Record<string, string> {
  const sys = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  return row.nodeUnderOpt
    ? { PATH: `/opt/node/bin:${sys}`, MOSAIC_CLAUDE_BIN: OPT_CLAUDE, LANG: "C.UTF-8" }
    : { PATH: `${REPO_ROOT}/node_modules/.bin:${sys}`, LANG: "C.UTF-8" };
}

/** node and the Claude Code binary copied where the /opt row's host keeps them. */
function optCopies(): { node: string; claude: string } {
  const dir = join(REPO_ROOT, ".scratch/matrix/opt");
  mkdirSync(join(dir, "node/bin"), { recursive: true });
  mkdirSync(join(dir, "claude/bin"), { recursive: true });
  copyFileSync(realpathSync(process.execPath), join(dir, "node/bin/node"));
  copyFileSync(realpathSync(join(REPO_ROOT, "node_modules/.bin/claude")), join(dir, "claude/bin/claude"));
  return { node: join(dir, "node"), claude: join(dir, "claude") };
}

/** The cgroup hierarchies a root caller makes each session's pids and memory cgroups under. */
function cgroupBinds(): Array<{ source: string; target: string; mode: "rw" }> {
  const v1 = ["pids", "memory"].map((c) => `/sys/fs/cgroup/${c}`);
  if (v1.every((p) => existsSync(join(p, "cgroup.procs"))))
    return v1.map((p) => ({ source: p, target: p, mode: "rw" as const }));
  return [{ source: "/sys/fs/cgroup", target: "/sys/fs/cgroup", mode: "rw" }];
}

export type Exec = { exitCode: number; stdout: string; stderr: string };

export interface Host {
  row: HostRow;
  id: string;
  exec(cmd: string[], as: "root" | "user", extraEnv?: Record<string, string>): Promise<Exec>;
  stop(): Promise<void>;
}

/** Starts the row's host; `lift` starts the same host with its restriction lifted (a control). */
export async function startHost(row: HostRow, lift: Lift = "none"): Promise<Host> {
  useEngine();
  const { GenericContainer } = await import("testcontainers");
  const image = imageTag(baseOf(row.base), imageSourceOf());
  for (const d of ["runs", ".scratch"]) mkdirSync(join(REPO_ROOT, d), { recursive: true });
  const security: string[] = [];
  const restricted = lift === "none";
  if (engine() === "docker") {
    // Docker's defaults block what every working row needs; each restricting row puts one back.
    if (!(row.procMasked && restricted)) security.push("systempaths=unconfined");
    security.push("apparmor=unconfined");
    security.push(row.seccompBlocksUserns && restricted ? `seccomp=${SECCOMP_BLOCKS_USERNS}` : "seccomp=unconfined");
  } else {
    if (!(row.procMasked && restricted)) security.push("unmask=ALL");
    // podman's compat API opens the profile by path (the service runs on this machine); Docker takes its text.
    if (row.seccompBlocksUserns && restricted) security.push(`seccomp=${seccompFile()}`);
  }
  const binds: Array<{ source: string; target: string; mode: "ro" | "rw" }> = [
    { source: REPO_ROOT, target: REPO_ROOT, mode: "ro" },
    ...cgroupBinds(),
  ];
  if (row.nodeUnderOpt) {
    const c = optCopies();
    binds.push(
      { source: c.node, target: "/opt/node", mode: "ro" },
      { source: c.claude, target: "/opt/claude", mode: "ro" },
    );
  }
  // Empty: podman would copy the host's runs/ and .scratch/ (root's, from other tiers) into them.
  const tmpfs = `rw,exec,mode=1777${engine() === "podman" ? ",notmpcopyup" : ""}`;
  // A tree copy (a mutation run's) links node_modules to the checkout's: bound too, at its own path.
  const modules = realpathSync(join(REPO_ROOT, "node_modules"));
  if (!modules.startsWith(`${REPO_ROOT}/`)) binds.push({ source: modules, target: modules, mode: "ro" });
  const started = await new GenericContainer(image)
    .withCommand(["sleep", "infinity"])
    .withNetworkMode("none")
    .withLabels({ [MATRIX_LABEL]: row.id })
    .withSecurityOpt(...security)
    .withBindMounts(binds)
    .withTmpFs({ [join(REPO_ROOT, "runs")]: tmpfs, [join(REPO_ROOT, ".scratch")]: tmpfs })
    .start();
  mkdirSync(dirname(CONTAINER_IDS), { recursive: true });
  appendFileSync(CONTAINER_IDS, `${started.getId()}\n`);
  const env = hostEnv(row);
  // The tmpfs mode option is not honoured through every runtime's API: the user arm needs them open.
  const open = await started.exec(["chmod", "1777", join(REPO_ROOT, "runs"), join(REPO_ROOT, ".scratch")]);
  if (open.exitCode !== 0) throw new Error(`chmod of the run and scratch tmpfs failed: ${open.output}`);
  return {
    row,
    id: started.getId(),
    async exec(cmd, as, extraEnv = {}) {
      const r = await started.exec(cmd, {
        workingDir: REPO_ROOT,
        env: { ...env, HOME: as === "root" ? "/root" : "/tmp", ...extraEnv },
        ...(as === "user" ? { user: USER } : {}),
      });
      return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr };
    },
    stop: async () => {
      await started.stop({ timeout: 0 });
    },
  };
}
