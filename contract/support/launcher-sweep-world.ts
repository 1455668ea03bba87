// The launcher's fast world for contract/launcher-sweep-*.test.ts: a runtime world with a checkout
// stand-in whose `src` is the repository's own and whose pi and claude answer their version probe
// at once (the real ones take seconds to start), so each prepareLaunch() is cheap enough to run per
// request shape. A bwrap stand-in on the session's PATH reads the capability and exits 7.
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../../src/conformance/golden/golden.ts";
import { makeRuntimeWorld, type RuntimeWorld } from "../../src/conformance/worlds/runtime-world.ts";
import { readHostFacts } from "../../src/host/host-facts.ts";
import { type LaunchRequest, prepareLaunch, type PreparedLaunch } from "../../src/host/launcher.ts";
import { prepareRunnerNode } from "../../src/host/runner-node.ts";
import { prepareSeccompFile } from "../../src/host/sandbox-probe.ts";

export interface LauncherWorld {
  w: RuntimeWorld;
  /** The checkout stand-in. */
  repo: string;
  /** A request for one of the shipped example instances, with a bus that records what it is asked. */
  request(
    example: string,
    name: string,
    extra?: Partial<LaunchRequest>,
  ): { req: LaunchRequest; issued: Array<{ run: string; instance: string }>; ended: string[] };
  /** prepareLaunch() of a request that must be ready. */
  ready(req: LaunchRequest): PreparedLaunch;
  close(): Promise<void>;
}

export async function makeLauncherWorld(label: string): Promise<LauncherWorld> {
  const w = await makeRuntimeWorld(label);
  const repo = join(w.root, "repo");
  mkdirSync(join(repo, "node_modules", ".bin"), { recursive: true });
  symlinkSync(join(REPO_ROOT, "src"), join(repo, "src"));
  writeFileSync(join(repo, "node_modules", ".bin", "pi"), "#!/bin/sh\necho 0.85.1\n", { mode: 0o755 });
  writeFileSync(join(repo, "claude"), "#!/bin/sh\necho '2.1.332 (Claude Code)'\n", { mode: 0o755 });
  const bin = join(w.root, "bin");
  mkdirSync(bin);
  chmodSync(bin, 0o755);
  writeFileSync(join(bin, "bwrap"), '#!/bin/sh\nread cap; echo "bwrap stand-in: $cap" >&2; exit 7\n', { mode: 0o755 });
  // The state directory's runner node and seccomp program, made once here rather than by the first test.
  const facts = readHostFacts({ repo, stateDir: w.stateDir });
  prepareRunnerNode(facts.runnerNode, facts.node.path);
  prepareSeccompFile(w.stateDir, facts.arch);
  return {
    w,
    repo,
    request(example, name, extra = {}) {
      const issued: Array<{ run: string; instance: string }> = [];
      const ended: string[] = [];
      const req = w.request(w.instance(example, name), {
        repo,
        bwrap: "/bin/true",
        hostEnv: {
          ...w.hostEnv,
          PATH: `${bin}:/usr/bin:/bin`,
          MOSAIC_CLAUDE_BIN: join(repo, "claude"),
          ANTHROPIC_API_KEY: "host-real-key",
        },
        bus: {
          issueCapability: (b) => {
            issued.push(b);
            return `cap-${name}`;
          },
          endRun: (run) => void ended.push(run),
        },
        ...extra,
      });
      return { req, issued, ended };
    },
    ready(req) {
      const p = prepareLaunch(req);
      if (p.kind !== "ready") throw new Error(`refused: ${p.code}: ${p.message}`);
      return p.prepared;
    },
    close: () => w.close(),
  };
}
