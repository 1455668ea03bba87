import { describe, expect, it } from "vitest";
import { binds } from "../src/core/sandbox/binds.ts";
import { bwrapArgv } from "../src/core/sandbox/bwrap-argv.ts";
import {
  diffBaselines,
  loadBaseline,
  loadBwrapBaselines,
  loadFact,
  parseHelpOptions,
  type Baseline,
} from "../src/conformance/baselines/baselines.ts";
import { diffFacts } from "../src/conformance/baselines/baseline-facts.ts";
import { HOST_LAYOUTS, ROLE_CASES, fixtureWorkspaceView } from "../src/conformance/worlds/host-fixtures.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { loadCases } from "./support/launch-cases.ts";

/**
 * Options a binary accepts without listing them as an option line of its --help. Each needs a
 * why and a live proof; keep this short.
 */
const ACCEPTED_UNLISTED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "claude-code": {
    "--append-system-prompt-file":
      "named in --help's --bare text; live/confined-session.test.ts runs the adapter's argv",
  },
  pi: {},
};

describe("the pure outputs use only options the pinned binaries have", () => {
  it("every bwrap option bwrapArgv() emits is in every pinned bwrap version (baselines/bwrap/)", () => {
    const versions = loadBwrapBaselines();
    expect(
      versions.map((b) => b.version),
      "this machine's 0.8.0 and the nightly runner's 0.9.0",
    ).toEqual(expect.arrayContaining(["0.8.0", "0.9.0"]));
    for (const b of versions) {
      const known = new Set(b.options);
      for (const layout of Object.values(HOST_LAYOUTS)) {
        for (const { spec } of Object.values(ROLE_CASES)) {
          const argv = bwrapArgv(spec, layout.facts, binds(spec, layout.facts, fixtureWorkspaceView(spec)));
          const opts = argv.slice(1, argv.indexOf("--")).filter((t) => t.startsWith("--"));
          for (const o of opts)
            expect(known.has(o), `${o} is not an option of the pinned bwrap ${b.version}`).toBe(true);
        }
      }
    }
  });
  it("each bwrap baseline is named by its version and says where it was read", () => {
    for (const b of loadBwrapBaselines()) {
      expect(loadBaseline("bwrap", b.version)?.version).toBe(b.version);
      expect(["binary", "documentation"]).toContain(b.source);
      expect(b.readWith.length).toBeGreaterThan(0);
    }
  });
  it("every option an adapter command line passes is one the pinned CLI has", () => {
    let checked = 0;
    for (const c of loadCases()) {
      const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
      if (d.kind !== "launch") continue;
      const binary = d.plan.harness;
      const known = new Set([...loadBaseline(binary)!.options, ...Object.keys(ACCEPTED_UNLISTED[binary] ?? {})]);
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
    const help =
      "Usage: x\n  -p, --print    Print\n  --tools <t...>  Tools\n      --ro-bind SRC DEST  Bind\nSee --not-an-option in prose.\n";
    expect(parseHelpOptions(help)).toEqual(["--print", "--ro-bind", "--tools", "-p"]);
  });
});

describe("baseline drift is named", () => {
  const pinned: Baseline = {
    binary: "x",
    readWith: ["x --help"],
    version: "1.0",
    source: "binary",
    options: ["--a", "--b"],
  };
  it("a version or option drift names what changed; none when they agree (negative control)", () => {
    expect(diffBaselines(pinned, { ...pinned, version: "1.1", options: ["--a", "--c"] })).toEqual([
      "version: pinned 1.0, installed 1.1",
      "options pinned but not in the installed --help: --b",
      "options in the installed --help but not pinned: --c",
    ]);
    expect(diffBaselines(pinned, pinned)).toEqual([]);
  });
  it("a fact that changed, appeared or went is named; none when they agree", () => {
    const f = (value: string | string[]) => ({ value, how: "behaviour" as const, readWith: "r" });
    expect(
      diffFacts(
        "claude-code",
        { "restricted-keeps-out": f(["a", "b"]), gone: f("x") },
        { "restricted-keeps-out": f(["a"]), fresh: f("y") },
      ),
    ).toEqual([
      'claude-code fact restricted-keeps-out: pinned ["a","b"], read ["a"]',
      'claude-code fact fresh: not pinned; read "y"',
      "claude-code fact gone: pinned but no longer read",
    ]);
    expect(diffFacts("pi", { a: f("1") }, { a: f("1") })).toEqual([]);
  });
  it("the facts the adapters and DESIGN.md rely on are pinned", () => {
    expect(loadFact("claude-code", "restricted-keeps-out"), "--restricted keeps auto-memory out").toContain(
      "home/.claude/projects/<slug>/memory/MEMORY.md",
    );
    expect(loadFact("claude-code", "setting-sources-empty-keeps-out"), '--setting-sources "" does not').not.toContain(
      "home/.claude/projects/<slug>/memory/MEMORY.md",
    );
    expect(loadFact("pi", "nc-keeps-out")).toContain("ws/AGENTS.md");
    expect(loadFact("claude-code", "glob-cut-characters")).toBe("*?[{");
    expect(() => loadFact("pi", "no-such-fact")).toThrow(/pins no fact no-such-fact/);
  });
});
