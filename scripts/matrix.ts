// npm run test:matrix: the host matrix's container runtime, its base images, its tests, and the
// cleanup after them. `node scripts/matrix.ts up|test|down`:
//   up    podman and its API socket (or the Docker engine DOCKER_HOST names), then every base image,
//         built or taken from the cache by its recipe's hash (matrix/bases.ts);
//   test  up, then `vitest --project matrix`, then down whatever the tests did; exits as vitest did;
//   down  every container the matrix made, by id; the API service and podman's helpers, by pid;
//         then checks no container mount is left.
// On a machine with Docker (a GitHub runner), DOCKER_HOST names it and podman is not used.
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { $, sleep } from "zx";
import { BASES, buildOf, imageSourceOf, imageTag, mmdebstrapArgs, registryDockerfile } from "../matrix/bases.ts";
import { CONTAINER_IDS, MATRIX_LABEL, PODMAN_SOCKET } from "../matrix/runtime.ts";

const ROOT = join(import.meta.dirname, "..");
const STATE_DIR = join(ROOT, ".scratch/matrix");
const STATE = join(STATE_DIR, "runtime.json");
const TIMES = join(ROOT, "reports/matrix/images.json");
/** podman's settings for this machine kind: see matrix/containers.conf. */
const CONTAINERS_CONF = join(ROOT, "matrix/containers.conf");
/** What podman needs here, from Debian's packages: runc (hybrid cgroups), mmdebstrap for the bases. */
const PACKAGES = ["podman", "runc", "uidmap", "mmdebstrap", "conmon"];

$.verbose = false;
const say = (s: string) => process.stdout.write(`matrix: ${s}\n`);

type State = { servicePid: number | null; socket: string; engine: "podman" | "docker" };

function engineOf(): "podman" | "docker" {
  return process.env.DOCKER_HOST !== undefined && process.env.DOCKER_HOST !== "" ? "docker" : "podman";
}

async function installPodman(): Promise<void> {
  const missing = [];
  for (const cmd of ["podman", "runc", "mmdebstrap"])
    if ((await $`command -v ${cmd}`.nothrow()).exitCode !== 0) missing.push(cmd);
  if (missing.length === 0) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      `${missing.join(", ")} missing, and only root installs them: apt-get install ${PACKAGES.join(" ")}`,
    );
  say(`installing ${PACKAGES.join(" ")} (missing: ${missing.join(", ")})`);
  await $({ env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })`apt-get update -qq`;
  await $({ env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } })`apt-get install -y -qq ${PACKAGES}`;
}

async function ping(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, path: "/_ping", timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => req.destroy());
    req.end();
  });
}

/** podman's API service: started by hand, since there is no systemd to socket-activate it. */
async function startService(): Promise<number | null> {
  if (await ping(PODMAN_SOCKET)) {
    say(`podman's API already answers on ${PODMAN_SOCKET}`);
    return null;
  }
  mkdirSync("/run/podman", { recursive: true });
  mkdirSync(STATE_DIR, { recursive: true });
  const log = openSync(join(STATE_DIR, "podman-service.log"), "a");
  // Its own process group, so down() stops it and every helper it forked by one pid.
  const p = spawn("podman", ["system", "service", "--time=0", `unix://${PODMAN_SOCKET}`], {
    env: { ...process.env, CONTAINERS_CONF },
    detached: true,
    stdio: ["ignore", log, log],
  });
  p.unref();
  closeSync(log);
  const pid = p.pid ?? null;
  for (let i = 0; i < 100; i++) {
    if (await ping(PODMAN_SOCKET)) {
      say(`podman's API service started (pid ${pid}) on ${PODMAN_SOCKET}`);
      return pid;
    }
    await sleep(100);
  }
  throw new Error(`podman system service did not answer on ${PODMAN_SOCKET} within 10 s`);
}

async function imageExists(engine: string, tag: string): Promise<boolean> {
  return (await $`${engine} image inspect ${tag}`.nothrow()).exitCode === 0;
}

type ImageTime = { base: string; tag: string; cached: boolean; seconds: number };

/** Every base, built where its tag is not there yet; the builds run at once (mostly downloads). */
async function buildImages(engine: string): Promise<ImageTime[]> {
  const source = imageSourceOf();
  mkdirSync(STATE_DIR, { recursive: true });
  return Promise.all(
    BASES.map(async (b): Promise<ImageTime> => {
      const tag = imageTag(b, source);
      const t0 = performance.now();
      if (await imageExists(engine, tag)) return { base: b.id, tag, cached: true, seconds: 0 };
      say(
        `building ${tag} (${buildOf(b, source) === "registry" ? b.registry : `mmdebstrap ${b.suite}, ${b.usr} /usr`})`,
      );
      if (buildOf(b, source) === "registry") {
        const file = join(STATE_DIR, `${b.id}.Dockerfile`);
        writeFileSync(file, registryDockerfile(b));
        await $`${engine} build -q -t ${tag} -f ${file} ${STATE_DIR}`;
      } else {
        const tar = join(STATE_DIR, `${b.id}.tar`);
        try {
          await $`mmdebstrap ${mmdebstrapArgs(b, tar)}`;
          await $`${engine} import ${tar} ${tag}`;
        } finally {
          rmSync(tar, { force: true });
        }
      }
      const seconds = (performance.now() - t0) / 1000;
      say(`built ${tag} in ${seconds.toFixed(0)} s`);
      return { base: b.id, tag, cached: false, seconds };
    }),
  );
}

async function up(): Promise<void> {
  const engine = engineOf();
  let state: State;
  if (engine === "docker") {
    state = { servicePid: null, socket: process.env.DOCKER_HOST!, engine };
    if ((await $`docker version`.nothrow()).exitCode !== 0)
      throw new Error(`DOCKER_HOST=${process.env.DOCKER_HOST} names no engine that answers \`docker version\``);
  } else {
    await installPodman();
    process.env.CONTAINERS_CONF = CONTAINERS_CONF;
    // A service this script started earlier stays this script's to stop.
    const earlier: State | null = existsSync(STATE) ? JSON.parse(readFileSync(STATE, "utf8")) : null;
    const started = await startService();
    const servicePid = started ?? (earlier?.servicePid && alive(earlier.servicePid) ? earlier.servicePid : null);
    state = { servicePid, socket: PODMAN_SOCKET, engine };
  }
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(STATE, JSON.stringify(state) + "\n");
  const times = await buildImages(engine);
  mkdirSync(join(ROOT, "reports/matrix"), { recursive: true });
  writeFileSync(TIMES, JSON.stringify(times, null, 2) + "\n");
  for (const t of times) say(`${t.base}: ${t.cached ? "cached" : `built in ${t.seconds.toFixed(0)} s`} (${t.tag})`);
}

async function down(): Promise<number> {
  const state: State | null = existsSync(STATE) ? JSON.parse(readFileSync(STATE, "utf8")) : null;
  const engine = state?.engine ?? engineOf();
  const env = { ...process.env, CONTAINERS_CONF };
  let problems = 0;
  // The ids the tests wrote as each container started, and any container still labelled (a crash
  // before the id was written): every one is removed by its id.
  const written = existsSync(CONTAINER_IDS) ? readFileSync(CONTAINER_IDS, "utf8").split("\n").filter(Boolean) : [];
  const hasEngine = (await $`command -v ${engine}`.nothrow()).exitCode === 0;
  const labelled = hasEngine
    ? (await $({ env })`${engine} ps -aq --no-trunc --filter label=${MATRIX_LABEL}`.nothrow()).stdout
        .split(/\s+/)
        .filter(Boolean)
    : [];
  const ids = [...new Set([...written, ...labelled])];
  if (hasEngine && labelled.length > 0) {
    say(`removing ${labelled.length} container(s) still there: ${labelled.map((i) => i.slice(0, 12)).join(" ")}`);
    await $({ env })`${engine} rm -f -t 0 ${labelled}`.nothrow();
    const left = (await $({ env })`${engine} ps -aq --filter label=${MATRIX_LABEL}`.nothrow()).stdout.trim();
    if (left !== "") {
      say(`containers still there after rm: ${left}`);
      problems++;
    }
  }
  if (engine === "podman") {
    // Each exec's conmon waits out its exit delay (300 s) after its container is gone: stopped by
    // the container id on its command line.
    let killed = 0;
    for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
      let args: string;
      try {
        args = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      } catch {
        continue; // gone meanwhile
      }
      if (!args.startsWith("/usr/bin/conmon\0") && !args.startsWith("conmon\0")) continue;
      if (ids.some((id) => args.includes(id))) {
        try {
          process.kill(Number(pid), "SIGKILL");
          killed++;
        } catch {}
      }
    }
    if (killed > 0) say(`stopped ${killed} conmon helper(s) of the matrix's containers`);
  }
  if (state?.servicePid) {
    try {
      process.kill(-state.servicePid, "SIGTERM");
    } catch {}
    for (let i = 0; i < 50 && alive(state.servicePid); i++) await sleep(100);
    if (alive(state.servicePid)) {
      say(`podman's API service (pid ${state.servicePid}) outlived SIGTERM: SIGKILL`);
      process.kill(-state.servicePid, "SIGKILL");
    }
    say(`podman's API service (pid ${state.servicePid}) stopped`);
  }
  if (engine === "podman") {
    const mounts = () =>
      readFileSync("/proc/mounts", "utf8")
        .split("\n")
        .filter(
          (l) =>
            ids.some((id) => l.includes(id)) || / \/var\/lib\/containers\/storage\/overlay\/[^ ]+\/merged /.test(l),
        );
    if (mounts().length > 0) {
      say(`container mounts left: ${mounts().length}; podman unmount --all`);
      await $({ env })`podman unmount --all`.nothrow();
    }
    if (mounts().length > 0) {
      say(`container mounts still left: ${mounts().join("; ")}`);
      problems++;
    }
  }
  rmSync(CONTAINER_IDS, { force: true });
  rmSync(STATE, { force: true });
  if (ids.length > 0) say(`${ids.length} container(s) of this run accounted for`);
  return problems;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function test(args: string[]): Promise<number> {
  try {
    await up();
  } catch (e) {
    // Under CI the matrix project then fails, naming this; locally it skips loudly.
    say(`the container runtime cannot start: ${(e as Error).message}`);
    process.env.MATRIX_RUNTIME_PROBLEM = (e as Error).message.split("\n")[0];
  }
  let status = 1;
  try {
    const r = await $({
      stdio: "inherit",
      nothrow: true,
    })`vitest run --project matrix --reporter=default --reporter=junit --outputFile.junit=reports/junit/matrix.xml ${args}`;
    status = r.exitCode ?? 1;
    // A skipped row is not a pass; then the mutation run may take this green run as its matrix
    // baseline while the tree is unchanged.
    for (const check of ["skips-check", "tree-proof"])
      if (status === 0)
        status =
          (await $({ stdio: "inherit", nothrow: true })`node scripts/${check}.ts reports/junit/matrix.xml`).exitCode ??
          1;
  } finally {
    const problems = await down();
    if (problems > 0 && status === 0) status = 1;
  }
  return status;
}

const [command, ...rest] = process.argv.slice(2);
try {
  if (command === "up") await up();
  else if (command === "down") process.exit((await down()) > 0 ? 1 : 0);
  else if (command === "test") process.exit(await test(rest));
  else {
    console.error("usage: node scripts/matrix.ts up|test|down [vitest options]");
    process.exit(2);
  }
} catch (e) {
  console.error(`matrix: ${(e as Error).message}`);
  process.exit(1);
}
