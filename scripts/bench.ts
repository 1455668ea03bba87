// npm run bench: every benchmark in scripts/bench/, each reporting ratios measured side by side in
// this one run, because absolute times on a shared machine drift. `npm run bench -- sandbox` runs one.
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = join(import.meta.dirname, "bench");
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith(".ts"))
  .sort();
for (const f of files) {
  const name = f.replace(/\.ts$/, "");
  if (only.length > 0 && !only.includes(name)) continue;
  console.log(`\n== ${name}`);
  const mod = (await import(join(dir, f))) as { run: () => Promise<void> };
  await mod.run();
}
