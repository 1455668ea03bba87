// The scenario's knobs, applied to a prepared launch before it starts. `break` removes a
// protection on purpose (a positive control: the attack then works); `fault` makes a part of the
// confinement fail (the gate missing, crashing or hanging; an unwritable TMPDIR), to show it fails
// closed. A real launch never does either: only the scenario runner edits a prepared launch.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GATE_KILL_AFTER_SECONDS, GATE_TIMEOUT_SECONDS } from "../../core/bundle/hook.ts";
import type { PreparedLaunch } from "../../host/launcher.ts";
import { withoutFlags } from "../controls/argv.ts";
import { exposedBind, withBindsBeforeLast } from "../controls/binds.ts";
import { launchWithArgv, launchWithBinds, launchWithEnv, launchWithSettings } from "../controls/launch.ts";
import type { RuntimeWorld } from "../worlds/runtime-world.ts";
import type { LaunchedSession } from "./load.ts";
import type { GateFault } from "./schema.ts";

/** The flag that configures each harness's gate: Pi's extension, Claude Code's settings file with the hook. */
const GATE_FLAG = { pi: "-e", "claude-code": "--settings" } as const;

function gateFlagValue(p: PreparedLaunch, harness: "pi" | "claude-code"): string {
  const argv = p.session.sessionFile.adapter.argv;
  const i = argv.indexOf(GATE_FLAG[harness]);
  if (i < 0 || i + 1 >= argv.length) throw new Error(`the adapter's argv has no ${GATE_FLAG[harness]} to act on`);
  return argv[i + 1]!;
}

/** The break knobs, applied on purpose. */
export function applyBreak(
  s: LaunchedSession,
  w: RuntimeWorld,
  p: PreparedLaunch,
  ws: string,
  hostEnv: Readonly<Record<string, string>>,
): PreparedLaunch {
  let out = p;
  if (s.break.credential === "exposed") {
    const key = hostEnv.ANTHROPIC_API_KEY;
    if (key === undefined)
      throw new Error("break.credential: the host's environment has no ANTHROPIC_API_KEY to expose");
    out = launchWithEnv(out, (env) => ({ ...env, ANTHROPIC_API_KEY: key }));
  }
  if (s.break.expose_stand_ins) {
    const files = Object.values(w.stand.files);
    out = launchWithBinds(out, (t) =>
      withBindsBeforeLast(
        t,
        files.map((f) => exposedBind(f)),
      ),
    );
  }
  if (s.break.launch_socket === "bound" && !out.session.binds.some((b) => b.row === "launch-socket")) {
    const sock = w.broker.launchSocket;
    out = launchWithBinds(out, (t) => withBindsBeforeLast(t, [exposedBind(sock, "launch-socket")]));
  }
  if (s.break.gate === "unhooked" && s.harness !== "fake")
    out = launchWithArgv(out, (argv) =>
      withoutFlags(argv, [
        [GATE_FLAG[s.harness as "pi" | "claude-code"], gateFlagValue(out, s.harness as "pi" | "claude-code")],
      ]),
    );
  if (s.break.gate === "no-handler" && s.harness === "pi") {
    const file = join(ws, FAULT_DIR, "gate-no-handler.ts");
    mkdirSync(join(ws, FAULT_DIR), { recursive: true });
    writeFileSync(file, piNoHandlerExtension());
    const ext = gateFlagValue(out, "pi");
    out = launchWithArgv(out, (argv) => argv.map((t) => (t === ext ? file : t)));
  }
  if (s.break.gate === "no-handler" && s.harness === "claude-code")
    out = launchWithSettings(out, "break.gate", (settings) => {
      const doc = JSON.parse(settings) as { hooks?: Record<string, unknown> };
      if (doc.hooks?.PreToolUse === undefined)
        throw new Error("break.gate: the bundle's settings.json has no PreToolUse hook");
      delete doc.hooks.PreToolUse;
      return JSON.stringify(doc, null, 2) + "\n";
    });
  if (s.break.drop_flags !== undefined) out = launchWithArgv(out, (argv) => withoutFlags(argv, s.break.drop_flags!));
  return out;
}

/**
 * Pi's extension with no tool_call handler at all, as a Pi that stopped calling it would be: every
 * call runs ungated. It still writes the turn marker at agent_end, so only the tripwire can tell.
 */
function piNoHandlerExtension(): string {
  return [
    `import { writeFileSync } from "node:fs";`,
    `export default function gateWithoutHandler(pi) {`,
    `  const marker = process.env.MOSAIC_TURN_MARKER;`,
    `  if (marker) pi.on("agent_end", () => writeFileSync(marker, "agent_end " + new Date().toISOString() + "\\n"));`,
    `}`,
    ``,
  ].join("\n");
}

/**
 * Pi's extension with the gate's tool_call handler made to crash or hang (holding the event loop, as
 * a gate stuck in a loop or a read would: a bare unresolved promise lets Pi exit). It still writes the
 * turn marker at agent_end, as the real one does, so a turn's outcome shows the gate's failure only.
 */
function piFaultExtension(mode: "crash" | "hang"): string {
  const fault =
    mode === "crash"
      ? `throw new Error("the gate crashed on purpose");`
      : `return new Promise(() => setInterval(() => {}, 1000));`;
  const handler = `() => { writeFileSync(new URL("./${GATE_CALLED}", import.meta.url), "${mode}\\n"); ${fault} }`;
  return [
    `import { writeFileSync } from "node:fs";`,
    `export default function faultyGate(pi) {`,
    `  pi.on("tool_call", ${handler});`,
    `  const marker = process.env.MOSAIC_TURN_MARKER;`,
    `  if (marker) pi.on("agent_end", () => writeFileSync(marker, "agent_end " + new Date().toISOString() + "\\n"));`,
    `}`,
    ``,
  ].join("\n");
}

/** Claude Code's gate script made to crash or hang; the hook command around it is the shipped one. */
function claudeFaultGate(mode: "crash" | "hang"): string {
  const called = `import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("./${GATE_CALLED}", import.meta.url), "${mode}\\n");\n`;
  return (
    called + (mode === "crash" ? `throw new Error("the gate crashed on purpose");\n` : `setInterval(() => {}, 1000);\n`)
  );
}

/** Where a faulty gate goes: the workspace, the one place both the host and the sandbox see at one path. */
export const FAULT_DIR = ".mosaic-fault";
/** The file a crashing or hanging gate writes beside itself when it is called: evidence the call reached it. */
export const GATE_CALLED = "gate-called";

function faultGatePath(ws: string, harness: "pi" | "claude-code", mode: GateFault): string {
  return join(ws, FAULT_DIR, `gate-${mode}.${harness === "pi" ? "ts" : "mjs"}`);
}

/** The fault knobs: the gate's file replaced by a missing, crashing or hanging one; TMPDIR made unwritable. */
export function applyFault(s: LaunchedSession, ws: string, repo: string, p: PreparedLaunch): PreparedLaunch {
  let out = p;
  const mode = s.fault.gate;
  if (mode !== undefined && s.harness !== "fake") {
    const harness = s.harness;
    const file = faultGatePath(ws, harness, mode);
    if (mode !== "missing") {
      mkdirSync(join(ws, FAULT_DIR), { recursive: true });
      writeFileSync(file, harness === "pi" ? piFaultExtension(mode) : claudeFaultGate(mode));
    }
    if (harness === "pi") {
      const ext = gateFlagValue(out, "pi");
      out = launchWithArgv(out, (argv) => argv.map((t) => (t === ext ? file : t)));
    } else {
      const gate = `${repo}/src/host/claude-gate.ts`;
      out = launchWithSettings(out, "fault.gate", (settings) => {
        if (!settings.includes(gate))
          throw new Error(`fault.gate: the bundle's settings.json has no hook running ${gate}`);
        return settings.replaceAll(gate, file);
      });
    }
  }
  const seconds = s.fault.gate_timeout_seconds;
  if (seconds !== undefined) {
    const shipped = `timeout -k ${GATE_KILL_AFTER_SECONDS} ${GATE_TIMEOUT_SECONDS} `;
    out = launchWithSettings(out, "fault.gate_timeout_seconds", (settings) => {
      // Found, or the run stops: a hook without its wrapper must not pass as a shortened one.
      if (!settings.includes(shipped))
        throw new Error(
          `fault.gate_timeout_seconds: the bundle's settings.json has no hook under \`${shipped.trim()}\``,
        );
      return settings.replaceAll(shipped, `timeout -k 1 ${seconds} `);
    });
  }
  // Read-only in every sandbox: the root is remounted read-only and no capability is left to write it.
  if (s.fault.tmpdir === "unwritable") out = launchWithEnv(out, (env) => ({ ...env, TMPDIR: "/usr" }));
  return out;
}
