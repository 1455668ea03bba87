// The behaviour the adapters rely on, read off the real binaries: what --restricted and
// --setting-sources "" keep out, the default tool sets, what Pi's -nc keeps out, and where
// Claude Code's Glob cuts a pattern's fixed part. `npm run baselines:sync` pins the facts in
// baselines/<binary>.json; live/baselines.test.ts reads them again and names any drift.
import { readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { Fact } from "./baselines.ts";
import { withoutFlags } from "../controls/argv.ts";
import { launchWithArgv, launchWithSettings } from "../controls/launch.ts";
import { CLAUDE_BIN, prepareLive, runLiveTurn, withKeptStdout } from "../worlds/live-session.ts";
import type { RuntimeWorld } from "../worlds/runtime-world.ts";
import { probeMemory, type Drop, type MemoryLocation } from "./memory-probe.ts";
import { startScriptedApi, toolResultsIn } from "../stand-ins/scripted-api.ts";
import { scriptOf } from "../stand-ins/model-script/format.ts";

export type FactSet = Record<string, Fact>;

const RESTRICTED = "--restricted";
const NO_SOURCES = ["--setting-sources", ""] as const;
const without = (a: readonly MemoryLocation[], b: readonly MemoryLocation[]) => a.filter((x) => !b.includes(x));

/**
 * The built-in tools of the stream-json init line of one turn with `--tools default`: the turn's
 * stdout is kept (withKeptStdout), since the reply carries only the result.
 */
async function readDefaultTools(w: RuntimeWorld, name: string, drop: readonly Drop[]): Promise<string[]> {
  const api = await startScriptedApi({ script: scriptOf([{ text: `turn-finished-${name}` }]) });
  try {
    const p = launchWithArgv(prepareLive(w, w.instance("claude-coder", name), api.url), (a) => {
      const argv = [...a];
      argv[argv.indexOf("--tools") + 1] = "default";
      return drop.length > 0 ? withoutFlags(argv, drop) : argv;
    });
    const t = await runLiveTurn(w, withKeptStdout(p), "say hello");
    const init = t.stdout
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { type?: string; subtype?: string; tools?: string[] })
      .find((m) => m.type === "system" && m.subtype === "init");
    if (!init?.tools) throw new Error(`no init line with tools (${t.reply ?? t.why}): ${t.stderr.slice(0, 600)}`);
    return init.tools.filter((t) => !t.startsWith("mcp__")).sort();
  } finally {
    await api.stop();
  }
}

/** What Claude Code answers a Read outside the working directory with the gate's hook removed: --restricted's own refusal. */
async function readRestrictedRead(w: RuntimeWorld): Promise<string> {
  const api = await startScriptedApi();
  try {
    const instance = w.instance("claude-coder", "fact-restricted-read");
    const p = launchWithSettings(prepareLive(w, instance, api.url), "the fact's read", (settings) =>
      JSON.stringify({ ...(JSON.parse(settings) as object), hooks: {} }),
    );
    const target = join(p.session.sessionFile.runDir, "session.json");
    api.replaceScript(
      scriptOf([
        { tool_use: { name: "Read", input: { file_path: target } } },
        { text: "turn-finished-restricted-read" },
      ]),
    );
    const t = await runLiveTurn(w, p, "read it");
    const seen = toolResultsIn(api.messageBodies().at(-1))[0];
    if (seen === undefined)
      throw new Error(`no tool result reached the model (${t.reply ?? t.why}): ${t.stderr.slice(0, 600)}`);
    return seen.split("\n")[0]!.split(target).join("<path>").split(instance.workspace).join("<cwd>");
  } finally {
    await api.stop();
  }
}

/**
 * The Glob tool's base-directory split, from the binary's embedded code: the pattern is cut at the
 * first match of a character class, then back to the last "/" before it. No run shows the class
 * (a Glob call's answer does not say where it started to walk), so it is read from the binary.
 */
export function readGlobCutCharacters(binary = realpathSync(CLAUDE_BIN)): Fact {
  const bytes = readFileSync(binary);
  const re =
    /\{let (\w+)=\/\[([^\]\/]+)\]\/,(\w+)=(\w+)\.match\(\1\);if\(!\3\|\|\3\.index===void 0\)\{[^}]*return\{baseDir:\w+,relativePattern:\w+\}\}let (\w+)=\4\.slice\(0,\3\.index\),\w+=Math\.max\(\5\.lastIndexOf\("\/"\)/g;
  // The binary is some 400 MB: regex only the windows around each "relativePattern:".
  const found = new Set<string>();
  for (let at = bytes.indexOf("relativePattern:"); at !== -1; at = bytes.indexOf("relativePattern:", at + 1)) {
    const window = bytes.subarray(Math.max(0, at - 400), at + 400).toString("latin1");
    for (const m of window.matchAll(re)) found.add(m[2]!);
  }
  if (found.size !== 1)
    throw new Error(
      `Claude Code's Glob base-directory split: ${found.size} candidates in ${binary} (${[...found].join(" | ")}); the code changed shape: read it again by hand`,
    );
  return {
    value: [...found][0]!,
    how: "binary-strings",
    readWith:
      "the Glob tool's base-directory split in node_modules/.bin/claude's embedded code: `let n=/[<class>]/,o=e.match(n); ... return{baseDir,relativePattern}`, the pattern cut at the first character of the class, then back to the last /",
  };
}

/** Every Claude Code fact: six turns of sessions the launcher started, and one read of the binary. */
export async function readClaudeFacts(w: RuntimeWorld): Promise<FactSet> {
  const neither = (await probeMemory(w, "fact-neither", "claude-coder", [RESTRICTED, NO_SOURCES])).reached;
  const restrictedOnly = (await probeMemory(w, "fact-restricted-only", "claude-coder", [NO_SOURCES])).reached;
  const sourcesOnly = (await probeMemory(w, "fact-sources-only", "claude-coder", [RESTRICTED])).reached;
  const memory =
    "a marker in every memory location (src/conformance/baselines/memory-probe.ts), one planned claude-coder turn in bwrap";
  return {
    "memory-read-without-flags": {
      value: neither,
      how: "behaviour",
      readWith: `${memory}, without --restricted and --setting-sources ""`,
    },
    "restricted-keeps-out": {
      value: without(neither, restrictedOnly),
      how: "behaviour",
      readWith: `${memory}, --restricted without --setting-sources ""`,
    },
    "setting-sources-empty-keeps-out": {
      value: without(neither, sourcesOnly),
      how: "behaviour",
      readWith: `${memory}, --setting-sources "" without --restricted`,
    },
    "restricted-file-tool-outside-cwd": {
      value: await readRestrictedRead(w),
      how: "behaviour",
      readWith:
        "a Read of <run>/session.json in a planned claude-coder turn with the gate's hook removed: the tool result's first line",
    },
    "default-tools": {
      value: await readDefaultTools(w, "fact-tools", [RESTRICTED]),
      how: "behaviour",
      readWith:
        "the stream-json init line's tools (no mcp__) of a planned claude-coder turn with --tools default, without --restricted",
    },
    "restricted-default-tools": {
      value: await readDefaultTools(w, "fact-tools-restricted", []),
      how: "behaviour",
      readWith: "the same with --restricted",
    },
    "glob-cut-characters": readGlobCutCharacters(),
  };
}

/** Pi's fact: what -nc keeps out. */
export async function readPiFacts(w: RuntimeWorld): Promise<FactSet> {
  const withNc = (await probeMemory(w, "fact-pi-nc", "pi-coder", [])).reached;
  const withoutNc = (await probeMemory(w, "fact-pi-no-nc", "pi-coder", ["-nc"])).reached;
  return {
    "nc-keeps-out": {
      value: without(withoutNc, withNc),
      how: "behaviour",
      readWith: "a marker in every memory location, one planned pi-coder turn in bwrap with and without -nc",
    },
  };
}

/** One line per fact that differs between pinned and read (a named diff); empty when all agree. */
export function diffFacts(binary: string, pinned: FactSet | undefined, read: FactSet): string[] {
  const out: string[] = [];
  for (const [name, f] of Object.entries(read)) {
    const p = pinned?.[name];
    if (p === undefined) out.push(`${binary} fact ${name}: not pinned; read ${JSON.stringify(f.value)}`);
    else if (JSON.stringify(p.value) !== JSON.stringify(f.value))
      out.push(`${binary} fact ${name}: pinned ${JSON.stringify(p.value)}, read ${JSON.stringify(f.value)}`);
  }
  for (const name of Object.keys(pinned ?? {}))
    if (!(name in read)) out.push(`${binary} fact ${name}: pinned but no longer read`);
  return out;
}
