import { afterAll, beforeAll, describe, expect } from "vitest";
import { ATTACKS, type AttackRow } from "../src/conformance/attacks/table.ts";
import { layer } from "../src/conformance/attacks/layers.ts";
import { runAttack, type AttackResult } from "../src/conformance/attacks/run.ts";
import { identityProblem, makeAttackWorld, type AttackWorld, type Identity } from "../src/conformance/attacks/world.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { checkoutProblem, liveIt } from "../src/conformance/tiers/live-gate.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";

// The attack table: every row run in a session the shipped launcher started (prepareLaunch(), the
// row's layers removed on purpose from the prepared launch, start()), on a launcher process of the
// identity's own, as root and as an unprivileged uid. Three kinds of test per row:
//   blocked       every layer in place: the attack does not get through (the host is unchanged);
//   <layer> alone every other layer removed on purpose: this one still stops it;
//   control       every layer removed on purpose: the same attack gets through.
// A mutant of a layer's safety line is killed by that row's "blocked" or "<layer> alone" test.
const sandbox = checkoutProblem(REPO_ROOT) ?? sandboxProblem(readHostFacts({ repo: REPO_ROOT }));

const layersOf = (row: AttackRow, id: Identity) => (typeof row.layers === "function" ? row.layers(id) : row.layers);

function explain(r: AttackResult): string {
  return `out: ${r.out.slice(0, 600)}\nstderr: ${r.stderr.slice(0, 1200)}\nreplied ${r.replied} status ${r.status} signal ${r.signal}`;
}

for (const identity of ["root", "user"] as const) {
  const it = liveIt(`bwrap, as ${identity}`, sandbox ?? identityProblem(identity));
  describe(`attack table as ${identity}`, () => {
    let w: AttackWorld;
    beforeAll(async () => {
      if ((sandbox ?? identityProblem(identity)) === null) w = await makeAttackWorld(identity);
    });
    afterAll(async () => w?.close());

    for (const row of ATTACKS.filter((r) => r.only === undefined || r.only.includes(identity))) {
      const layers = layersOf(row, identity);
      it(
        `${row.id}: blocked: ${row.what}`,
        async () => {
          const r = await runAttack(w, row, []);
          expect(
            r.ran,
            `the runner ran the attack to its end: a sandbox that never ran blocks nothing\n${explain(r)}`,
          ).toBe(true);
          expect(r.through, `${row.id} got through with every layer in place\n${explain(r)}`).toBe(false);
          expect(r.stubsLeft, "every placeholder was removed from the host's workspace").toEqual([]);
        },
        row.timeoutMs === undefined ? undefined : row.timeoutMs + 30_000,
      );
      if (layers.length > 1) {
        for (const keep of layers) {
          it(
            `${row.id}: ${keep} alone blocks it`,
            async () => {
              const r = await runAttack(
                w,
                row,
                layers.filter((l) => l !== keep),
              );
              expect(r.ran, `the runner ran the attack to its end\n${explain(r)}`).toBe(true);
              expect(r.through, `${row.id} got through with only ${layer(keep).why} in place\n${explain(r)}`).toBe(
                false,
              );
            },
            row.timeoutMs === undefined ? undefined : row.timeoutMs + 30_000,
          );
        }
      }
      if (layers.length > 0 && (row.controlFor ?? ["root", "user"]).includes(identity)) {
        const removes = row.controlRemoves ?? layers;
        it(
          `${row.id}: control: with ${removes.join(", ")} removed on purpose, it gets through`,
          async () => {
            const r = await runAttack(w, row, removes);
            expect(r.through, `the control did not get through, so the row proves nothing\n${explain(r)}`).toBe(true);
          },
          row.timeoutMs === undefined ? undefined : row.timeoutMs + 30_000,
        );
      }
    }
  });
}
