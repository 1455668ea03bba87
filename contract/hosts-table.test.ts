// The README's Hosts table is written from baselines/hosts.json, which `npm run test:matrix`
// compares every run with (MATRIX_UPDATE=1 rewrites it). Here: the README shows exactly that file,
// and the file says for every row what the row expects, so a careless update cannot hide a change.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DIAGNOSES } from "../src/core/sandbox/diagnose.ts";
import { baseOf } from "../matrix/bases.ts";
import { HOSTS } from "../matrix/hosts.ts";
import { HOSTS_TABLE, readHostResults, renderHostsTable } from "../matrix/results.ts";

const ROOT = join(import.meta.dirname, "..");
const results = readHostResults();

describe("the README's Hosts table", () => {
  it("is baselines/hosts.json rendered, between its markers", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const m = HOSTS_TABLE.exec(readme);
    expect(m, "README.md has the hosts:start and hosts:end markers").not.toBeNull();
    expect(m![1]).toBe(renderHostsTable(results));
  });

  it("baselines/hosts.json holds every row as root and as a user, and each says what its row expects", () => {
    expect(results.map((r) => `${r.row}/${r.as}`)).toEqual(HOSTS.flatMap((h) => [`${h.id}/root`, `${h.id}/user`]));
    for (const r of results) {
      const h = HOSTS.find((x) => x.id === r.row)!;
      if (h.expect.kind === "works") {
        expect([r.row, r.probe], "a working host's probe passes").toEqual([r.row, "works"]);
        expect(r.sessions, `${r.row}: every scenario ran`).toEqual([...h.scenarios]);
        expect(r.attacksBlocked, `${r.row}: attack rows blocked`).toBeGreaterThan(0);
      } else {
        const cause = h.expect.cause;
        const d = DIAGNOSES.find((x) => x.id === cause)!;
        expect([r.row, r.probe], "a refusing host names its cause and fix").toEqual([r.row, `${d.cause}: ${d.fix}`]);
        expect(r.sessions, `${r.row}: no session starts`).toEqual([]);
      }
      expect(r.usr, `${r.row}'s layout is its base's`).toBe(baseOf(h.base).usr);
    }
  });
});
