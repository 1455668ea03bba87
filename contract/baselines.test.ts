import { describe, expect, it } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import { loadBaseline, parseHelpOptions } from "../src/conformance/baselines.ts";
import { HOST_LAYOUTS, ROLE_CASES } from "../src/conformance/host-fixtures.ts";

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
  it("the help parser reads short and long options, and ignores prose (positive and negative control)", () => {
    const help = "Usage: x\n  -p, --print    Print\n  --tools <t...>  Tools\n      --ro-bind SRC DEST  Bind\nSee --not-an-option in prose.\n";
    expect(parseHelpOptions(help)).toEqual(["--print", "--ro-bind", "--tools", "-p"]);
  });
});
