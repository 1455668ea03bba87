import { describe, expect, it } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import { loadBaseline, parseHelpOptions } from "../src/conformance/baselines.ts";
import { HOST_LAYOUTS, ROLE_CASES } from "../src/conformance/host-fixtures.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { loadCases } from "./support/launch-cases.ts";

/**
 * Options a binary accepts without listing them as an option line of its --help. Each needs a
 * why and a live proof; keep this short.
 */
const ACCEPTED_UNLISTED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "claude-code": {
    "--append-system-prompt-file": "named in --help's --bare text; live/confined-session.test.ts runs the adapter's argv",
  },
  pi: {},
};

describe("the pure outputs use only options the pinned binaries have", () => {
  it("every bwrap option bwrapArgv() emits is in baselines/bwrap.json", () => {
    const known = new Set(loadBaseline("bwrap").options);
    for (const layout of Object.values(HOST_LAYOUTS)) {
      for (const { spec } of Object.values(ROLE_CASES)) {
        const argv = bwrapArgv(spec, layout.facts, binds(spec, layout.facts));
        const opts = argv.slice(1, argv.indexOf("--")).filter((t) => t.startsWith("--"));
        for (const o of opts) expect(known.has(o), `${o} is not an option of the pinned bwrap`).toBe(true);
      }
    }
  });
  it("every option an adapter command line passes is one the pinned CLI has", () => {
    let checked = 0;
    for (const c of loadCases()) {
      const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
      if (d.kind !== "launch") continue;
      const binary = d.plan.harness;
      const known = new Set([...loadBaseline(binary).options, ...Object.keys(ACCEPTED_UNLISTED[binary] ?? {})]);
      const argv = d.plan.adapter.argv;
      const end = argv.lastIndexOf("--");
      for (const tok of argv.slice(1, end).filter((t) => /^-{1,2}[a-zA-Z]/.test(t))) {
        expect(known.has(tok), `${c.name}: ${tok} is not an option of the pinned ${binary}`).toBe(true);
        checked++;
      }
    }
    expect(checked, "some adapter options were checked").toBeGreaterThan(20);
  });
  it("the help parser reads short and long options, and ignores prose (positive and negative control)", () => {
    const help = "Usage: x\n  -p, --print    Print\n  --tools <t...>  Tools\n      --ro-bind SRC DEST  Bind\nSee --not-an-option in prose.\n";
    expect(parseHelpOptions(help)).toEqual(["--print", "--ro-bind", "--tools", "-p"]);
  });
});
