import { spawnSync } from "node:child_process";
import { Bench } from "tinybench";
import { binds, systemBinds } from "../../src/core/sandbox/binds.ts";
import { NAMESPACES, bindArgs, bwrapArgv } from "../../src/core/sandbox/bwrap-argv.ts";
import { HOST_LAYOUTS, ROLE_CASES } from "../../src/conformance/host-fixtures.ts";
import { REPO_ROOT } from "../../src/conformance/golden.ts";
import { readHostFacts } from "../../src/host/host-facts.ts";

/** Plans per second (pure), and a confined `true` against an unconfined one, as a ratio. */
export async function run(): Promise<void> {
  const { spec } = ROLE_CASES["claude-pm"]!;
  const facts = HOST_LAYOUTS["merged-usr"]!.facts;
  const bench = new Bench({ time: 500 });
  bench.add("binds + bwrapArgv (claude-pm)", () => {
    bwrapArgv(spec, facts, binds(spec, facts));
  });
  await bench.run();
  for (const t of bench.tasks) console.log(`${t.name}: ${Math.round((t.result as { throughput: { mean: number } }).throughput.mean).toLocaleString("en")} plans/s`);

  const host = readHostFacts({ repo: REPO_ROOT });
  const confined = ["bwrap", ...NAMESPACES, ...systemBinds(host).flatMap(bindArgs), "--remount-ro", "/", "--", "true"];
  const time = (argv: string[], n: number) => {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) {
      const r = spawnSync(argv[0]!, argv.slice(1), { stdio: "ignore" });
      if (r.status !== 0) throw new Error(`${argv.join(" ")} exited ${r.status}`);
    }
    return Number(process.hrtime.bigint() - t0) / 1e6 / n;
  };
  const n = 40;
  // Interleave the two so drift hits both alike.
  let a = 0, b = 0;
  for (let round = 0; round < 4; round++) {
    a += time(["/usr/bin/true"], n / 4);
    b += time(confined, n / 4);
  }
  console.log(`spawn true: unconfined ${(a / 4).toFixed(2)} ms, in bwrap ${(b / 4).toFixed(2)} ms, ratio ${(b / a).toFixed(2)}x`);
}
