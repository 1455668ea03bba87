// Runs inside a matrix host (node from the bound checkout), as root or as a user, and prints one
// JSON document for matrix/hosts.test.ts to assert on:
//   launch        the launcher's decision for a pi-coder session: launched, or its refusal event;
//   merged-facts  the probe on this host, and on this host's facts with /bin, /lib, /lib64 and /sbin
//                 taken for merged-usr links (the split-usr row's positive control);
//   attacks       MATRIX_ATTACKS, each through this host's launcher (prepareLaunch(), start()): blocked
//                 with every layer in place and let through with the row's layers removed on purpose
//                 from the prepared launch (the control), as this process's identity.
import { ATTACKS } from "../src/conformance/attacks/table.ts";
import { runAttack } from "../src/conformance/attacks/run.ts";
import { makeAttackWorld } from "../src/conformance/attacks/world.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeRuntimeWorld } from "../src/conformance/worlds/runtime-world.ts";
import { TOP_LINKS, type HostFacts } from "../src/core/sandbox/types.ts";
import { readHostFacts } from "../src/host/host-facts.ts";
import { prepareLaunch } from "../src/host/launcher.ts";
import { sandboxProblem } from "../src/host/sandbox-probe.ts";
import { MATRIX_ATTACKS } from "./attacks.ts";

const say = (v: unknown) => process.stdout.write(JSON.stringify(v) + "\n");

async function launch(): Promise<void> {
  const w = await makeRuntimeWorld("matrix-launch");
  try {
    const p = prepareLaunch(w.request(w.instance("pi-coder", "matrix-launch")));
    say(p.kind === "refuse" ? { kind: "refuse", code: p.code, message: p.message } : { kind: "ready" });
  } finally {
    await w.close();
  }
}

function mergedFacts(): void {
  const facts = readHostFacts({ repo: REPO_ROOT });
  const merged: HostFacts = {
    ...facts,
    top: Object.fromEntries(TOP_LINKS.map((p) => [p, { kind: "symlink", target: `usr${p}` }])) as HostFacts["top"],
  };
  say({ top: facts.top, own: sandboxProblem(facts), merged: sandboxProblem(merged) });
}

async function attacks(): Promise<void> {
  const identity = process.getuid?.() === 0 ? "root" : "user";
  const w = await makeAttackWorld(identity);
  const out = [];
  try {
    for (const id of MATRIX_ATTACKS) {
      const row = ATTACKS.find((r) => r.id === id);
      if (row === undefined) throw new Error(`no attack row ${id}`);
      const layers = typeof row.layers === "function" ? row.layers(identity) : row.layers;
      const blocked = await runAttack(w, row, []);
      const hasControl = layers.length > 0 && (row.controlFor ?? ["root", "user"]).includes(identity);
      const control = hasControl ? await runAttack(w, row, row.controlRemoves ?? layers) : null;
      out.push({
        id,
        identity,
        blocked: {
          through: blocked.through,
          ran: blocked.ran,
          out: blocked.out.slice(0, 400),
        },
        control: control === null ? null : { through: control.through, out: control.out.slice(0, 400) },
      });
    }
  } finally {
    await w.close();
  }
  say(out);
}

const command = process.argv[2];
if (command === "launch") await launch();
else if (command === "merged-facts") mergedFacts();
else if (command === "attacks") await attacks();
else {
  console.error("usage: node matrix/inside.ts launch|merged-facts|attacks");
  process.exit(2);
}
