import { Bench } from "tinybench";
import { decideLaunch } from "../../src/core/launch/decide-launch.ts";
import { caseNames, loadCase } from "../../contract/support/launch-cases.ts";

/**
 * Launch plans per second (route, bundle with its digests, adapter command) for the largest example
 * instance, the one whose planned bundle is biggest; beside it the smallest, as a ratio, because
 * absolute times on a shared machine drift.
 */
export async function run(): Promise<void> {
  const sized = caseNames()
    .map(loadCase)
    .flatMap((c) => {
      const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
      return d.kind === "launch" ? [{ c, bytes: Object.values(d.plan.bundle).reduce((n, b) => n + b.length, 0) }] : [];
    })
    .sort((a, b) => b.bytes - a.bytes);
  const largest = sized[0]!;
  const smallest = sized.at(-1)!;
  const bench = new Bench({ time: 500 });
  for (const { c, bytes } of [largest, smallest]) {
    bench.add(`decideLaunch ${c.name} (${bytes} bundle bytes)`, () => {
      decideLaunch(c.instance, c.settings, c.facts, c.env);
    });
  }
  await bench.run();
  const rate = (i: number) => (bench.tasks[i]!.result as { throughput: { mean: number } }).throughput.mean;
  for (const [i, t] of bench.tasks.entries())
    console.log(`${t.name}: ${Math.round(rate(i)).toLocaleString("en")} plans/s`);
  console.log(`largest/smallest time ratio: ${(rate(1) / rate(0)).toFixed(2)}x`);
}
