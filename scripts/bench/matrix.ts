// The host matrix's wall time per row (npm run bench -- matrix; the runtime must be up:
// `npm run matrix -- up`): container start, the probe (`plan`) and a fake-adapter session in the
// container, each beside the same command on this host in the same run, interleaved, so the ratio
// prices the container. Image builds are read from reports/matrix/images.json, which the last
// `npm run matrix -- up` wrote: a cold build when it built, 0 s when the image was cached.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { HOSTS } from "../../matrix/hosts.ts";
import { runtimeProblem, startHost } from "../../matrix/runtime.ts";

const ROUNDS = 3;
const PLAN = ["node", "src/cli/main.ts", "plan", "scenarios/plan/pi-coder.json", "--json"];
const SESSION = ["node", "src/cli/main.ts", "run", "--only", "fake-shell-confined", "--json", "--jobs", "1"];

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await f();
  return [performance.now() - t0, v];
}

function onHost(cmd: string[]): number {
  const t0 = performance.now();
  spawnSync(cmd[0]!, cmd.slice(1), { cwd: REPO_ROOT, stdio: "ignore" });
  return performance.now() - t0;
}

export async function run(): Promise<void> {
  const problem = await runtimeProblem();
  if (problem !== null) {
    console.log(`matrix: not measured: ${problem}`);
    return;
  }
  const images = join(REPO_ROOT, "reports/matrix/images.json");
  if (existsSync(images))
    for (const i of JSON.parse(readFileSync(images, "utf8")) as Array<{
      base: string;
      cached: boolean;
      seconds: number;
    }>)
      console.log(
        `image ${i.base}: ${i.cached ? "cached at the last up" : `built cold in ${i.seconds.toFixed(0)} s at the last up`}`,
      );
  console.log("row | container start | probe in it (x host) | session in it (x host)");
  for (const row of HOSTS) {
    const start: number[] = [];
    const probe: number[] = [];
    const probeHost: number[] = [];
    const session: number[] = [];
    const sessionHost: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const [ms, host] = await timed(() => startHost(row));
      start.push(ms);
      try {
        probeHost.push(onHost(PLAN));
        probe.push((await timed(() => host.exec(PLAN, "root")))[0]);
        if (row.expect.kind === "works") {
          sessionHost.push(onHost(SESSION));
          session.push((await timed(() => host.exec(SESSION, "root")))[0]);
        }
      } finally {
        await host.stop();
      }
      process.stderr.write(`${row.id} round ${i + 1}/${ROUNDS}\n`);
    }
    const ratio = (a: number[], b: number[]) => `${med(a).toFixed(0)} ms (${(med(a) / med(b)).toFixed(2)}x)`;
    console.log(
      `${row.id} | ${med(start).toFixed(0)} ms | ${ratio(probe, probeHost)} | ${session.length ? ratio(session, sessionHost) : "refuses: no session"}`,
    );
  }
}
