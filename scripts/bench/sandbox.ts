// Not through start(): it times bwrap's own spawn of `true`, bare and hardened; no session runs.
import { spawnSync } from "node:child_process";
import { Bench } from "tinybench";
import { closeSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { BIND_TABLE_SYSTEM_ROWS, binds, systemBinds } from "../../src/core/sandbox/binds.ts";
import { HARDENING, NAMESPACES, bindArgs, bwrapArgv } from "../../src/core/sandbox/bwrap-argv.ts";
import { SESSION_LIMITS } from "../../src/core/sandbox/limits.ts";
import { prepareSeccompFile } from "../../src/host/sandbox-probe.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixtureWorkspaceView } from "../../src/conformance/worlds/host-fixtures.ts";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { readHostFacts } from "../../src/host/host-facts.ts";

/** Plans per second (pure), and a confined `true` against an unconfined one, as a ratio. */
export async function run(): Promise<void> {
  const { spec } = ROLE_CASES["claude-pm"]!;
  const facts = HOST_LAYOUTS["merged-usr"]!.facts;
  const view = fixtureWorkspaceView(spec);
  const bench = new Bench({ time: 500 });
  bench.add("binds + bwrapArgv (claude-pm)", () => {
    bwrapArgv(spec, facts, binds(spec, facts, view));
  });
  await bench.run();
  for (const t of bench.tasks)
    console.log(
      `${t.name}: ${Math.round((t.result as { throughput: { mean: number } }).throughput.mean).toLocaleString("en")} plans/s`,
    );

  const host = readHostFacts({ repo: REPO_ROOT });
  const stateDir = dirname(dirname(host.runnerNode));
  const seccompFile = prepareSeccompFile(stateDir, host.arch);
  const system = systemBinds(host)
    .filter((b) => BIND_TABLE_SYSTEM_ROWS.includes(b.row))
    .flatMap(bindArgs);
  const tmp = systemBinds(host)
    .filter((b) => b.row === "tmp")
    .flatMap(bindArgs);
  // The seed's sandbox (before issue 8) and today's: every hardening option, the tmpfs bounds, and
  // the runner's setpriv and prlimit execs in front of the command.
  const seed = ["bwrap", ...NAMESPACES, ...system, "--remount-ro", "/", "--", "true"];
  const hardened = [
    "bwrap",
    ...NAMESPACES,
    ...HARDENING.flatMap((h) => h.args),
    ...system,
    ...tmp,
    "--remount-ro",
    "/",
    "--",
    "setpriv",
    "--pdeathsig",
    "KILL",
    "--",
    "prlimit",
    `--nproc=${SESSION_LIMITS.tasks.value}`,
    "--",
    "true",
  ];
  const time = (argv: string[], n: number) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      // A fresh descriptor each time: bwrap reads the program to its end, and the offset is shared.
      const fd = openSync(seccompFile, "r");
      const r = spawnSync(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "ignore", fd] });
      closeSync(fd);
      if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}`);
    }
    return Number(process.hrtime.bigint() - t0) / 1e6 / n;
  };
  const n = 60;
  // Interleave the three so drift hits all alike.
  let a = 0,
    b = 0,
    c = 0;
  for (let round = 0; round < 6; round++) {
    a += time(["/usr/bin/true"], n / 6);
    b += time(seed, n / 6);
    c += time(hardened, n / 6);
  }
  console.log(
    `spawn true: unconfined ${(a / 6).toFixed(2)} ms, seed sandbox ${(b / 6).toFixed(2)} ms (${(b / a).toFixed(2)}x), hardened ${(c / 6).toFixed(2)} ms (${(c / a).toFixed(2)}x; ${(c / b).toFixed(2)}x the seed's)`,
  );
}
