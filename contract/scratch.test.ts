// Scratch roots: a live test that failed keeps its roots for CI to upload, except inside a mutation
// run's test host, where a failure is a mutant doing its job and kept roots only fill the disk.
import { spawnSync } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { MUTATION_HOST_ENV } from "../src/mutation/host-pool.ts";

/** In a process of its own: a root made, the test marked failed, the root removed; where it was. */
function failThenRemove(env: Record<string, string>): string {
  const script = [
    `import { makeScratch, markTestFailed } from ${JSON.stringify(join(REPO_ROOT, "src/conformance/worlds/scratch.ts"))};`,
    `const s = makeScratch("keep-check"); markTestFailed(); s.remove(); console.log(s.root);`,
  ].join("\n");
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env },
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trim();
}

describe("scratch roots of a failed test", () => {
  it("are kept for inspection; inside a mutation host they are removed", () => {
    const kept = failThenRemove({});
    expect(existsSync(kept), "a failed test's root stays for CI to upload").toBe(true);
    rmSync(kept, { recursive: true, force: true });
    const inHost = failThenRemove({ [MUTATION_HOST_ENV]: "1" });
    expect(inHost).not.toBe("");
    expect(existsSync(inHost), "a mutant's failure keeps nothing").toBe(false);
  });
});
