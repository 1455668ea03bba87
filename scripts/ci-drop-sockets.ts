// `npm run ci:drop-sockets` (CI only): delete the Unix sockets under runs/ and the kept scratch
// roots, which upload-artifact cannot read (ENXIO), so the rest can be uploaded.
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

let dropped = 0;
const walk = (dir: string): void => {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isSocket()) {
      rmSync(p);
      dropped++;
    } else if (st.isDirectory()) walk(p);
  }
};
for (const dir of ["runs", ".scratch/live", "/var/tmp/mosaic-harness-scratch"]) if (existsSync(dir)) walk(dir);
console.log(`ci:drop-sockets: ${dropped} socket(s) deleted`);
