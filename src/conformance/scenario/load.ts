// Loads one scenario file: YAML with line counters, the outer shape, each instance, model script
// and assertion on its own, then what the fields say together. Every error is a ScenarioError
// (a MosaicError) naming the file, the line and the field; an unknown key names the key.
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { LineCounter, parseDocument, parse as parseYaml, type Document } from "yaml";
import type { z } from "zod";
import { MosaicError, isMosaicError, type MosaicErrorCode } from "../../core/errors.ts";
import { formatPath, parseInstance } from "../../core/launch/instance.ts";
import { heldActions } from "../../core/tools/catalog.ts";
import { REPO_ROOT } from "../golden/golden.ts";
import { loadModelScript, type ModelScript } from "../stand-ins/model-script/format.ts";
import { templateVarProblem, templateVarsIn, TEMPLATE_VARS, type TemplateVar } from "./template-vars.ts";
import {
  ASSERTION_KINDS,
  InlineInstanceSchema,
  InstanceRefSchema,
  LaunchedOuterSchema,
  ScenarioOuterSchema,
  assertionSchema,
  type Assertion,
  type AssertionKind,
  type Break,
  type Fault,
  type Harness,
} from "./schema.ts";
import { lineOf, parseFieldPath } from "./yaml-lines.ts";

export const INSTANCES_DIR = join(REPO_ROOT, "scenarios/instances");

export type ScenarioInstance = z.infer<typeof InlineInstanceSchema>;

export interface LoadedSession {
  harness: Harness;
  instance: ScenarioInstance;
  /** The scenarios/instances/ name it came from, or null when inline. */
  instanceRef: string | null;
  /** Null for the fake harness, which has no model. */
  model: ModelScript | null;
}

/** A session the scenario's main one launches, with its own knobs and assertions. */
export interface LaunchedSession extends LoadedSession {
  break: Break;
  fault: Fault;
  assertions: Assertion[];
}

export interface Scenario extends LoadedSession {
  file: string;
  name: string;
  description: string;
  workspace: { files: Record<string, string>; links: Record<string, string> };
  /** Planted under the run directory after the launch, before the first message. */
  runFiles: Record<string, string>;
  neighbourProcess: boolean;
  networkTrap: boolean;
  turnTimeoutSeconds: number;
  messages: Array<{ body: string }>;
  break: Break;
  fault: Fault;
  assertions: Assertion[];
  /** Started by the runner's launch service when the main session's launch call names one's instance. */
  launches: LaunchedSession[];
}

/** A scenario that does not load: the file, the 1-based line (null when none applies) and the field. */
export class ScenarioError extends MosaicError {
  readonly file: string;
  readonly line: number | null;
  /** The message without the field and the place. */
  readonly detail: string;
  constructor(code: MosaicErrorCode, field: string, detail: string, file: string, line: number | null) {
    super(code, field, `${detail} (${file}${line === null ? "" : `:${line}`})`);
    this.name = "ScenarioError";
    this.file = file;
    this.line = line;
    this.detail = detail;
  }
}

/** `file:line: field: message [code]`, as a compiler writes it, so an editor can jump there. */
export function formatScenarioError(e: ScenarioError): string {
  return `${e.file}${e.line === null ? "" : `:${e.line}`}: ${e.field}: ${e.detail} [${e.code}]`;
}

type Path = ReadonlyArray<string | number>;
type Issue = z.core.$ZodIssue;

/** A zod failure as one issue a person can act on: an unknown key first, a union's matching branch, a record's bad key. */
function pickIssue(issues: readonly Issue[], at: Path = []): { path: Path; issue: Issue } {
  const issue = issues.find((i) => i.code === "unrecognized_keys") ?? issues[0]!;
  const here = [...at, ...(issue.path as Array<string | number>)];
  if (issue.code === "invalid_union" && issue.errors.length > 0) {
    // The branch whose own type matched the value: its complaint is about the fields, not the kind.
    const branch =
      issue.errors.find(
        (b) => !b.some((i) => i.path.length === 0 && (i.code === "invalid_type" || i.code === "invalid_value")),
      ) ?? issue.errors.at(-1)!;
    if (branch.length > 0) return pickIssue(branch, here);
  }
  return { path: here, issue };
}

function valueAt(value: unknown, path: Path): unknown {
  let v = value;
  for (const seg of path) v = typeof v === "object" && v !== null ? (v as Record<string, unknown>)[seg] : undefined;
  return v;
}

class Checker {
  readonly file: string;
  private readonly doc: Document;
  private readonly lc: LineCounter;
  constructor(file: string, doc: Document, lc: LineCounter) {
    this.file = file;
    this.doc = doc;
    this.lc = lc;
  }

  fail(path: Path, detail: string, code: MosaicErrorCode = "bad-scenario"): never {
    throw new ScenarioError(code, formatPath(path), detail, this.file, lineOf(this.doc, this.lc, path));
  }

  /** Parses `value` (found at `at` in the document) with a strict schema; the first issue becomes an error at its field. */
  check<T>(schema: z.ZodType<T>, value: unknown, at: Path): T {
    const r = schema.safeParse(value);
    if (r.success) return r.data;
    const { path, issue } = pickIssue(r.error.issues, at);
    if (issue.code === "unrecognized_keys") return this.fail([...path, issue.keys[0]!], "not a field here (a typo?)");
    if (issue.code === "invalid_key") return this.fail(path, `a bad key: ${issue.issues[0]?.message ?? issue.message}`);
    const rel = path.slice(at.length);
    if (valueAt(value, rel) === undefined) return this.fail(path, "missing", "missing-field");
    return this.fail(path, issue.message);
  }
}

/** Every string in a value with its path, where template variables may stand. */
function* stringsOf(value: unknown, at: Path): Generator<[string, Path]> {
  if (typeof value === "string") yield [value, at];
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* stringsOf(v, [...at, i]);
  else if (typeof value === "object" && value !== null)
    for (const [k, v] of Object.entries(value)) yield* stringsOf(v, [...at, k]);
}

function loadInstance(
  c: Checker,
  value: unknown,
  at: Path,
  instancesDir: string,
): { instance: ScenarioInstance; instanceRef: string | null } {
  if (typeof value === "object" && value !== null && Object.hasOwn(value, "ref")) {
    const { ref } = c.check(InstanceRefSchema, value, at);
    const file = join(instancesDir, `${ref}.yaml`);
    let doc: { instance?: unknown };
    try {
      doc = parseYaml(readFileSync(file, "utf8")) as { instance?: unknown };
    } catch (e) {
      return c.fail(
        [...at, "ref"],
        `${file} cannot be read as YAML: ${(e as Error).message.split("\n")[0]}`,
        "bad-instance-ref",
      );
    }
    try {
      const { workspace: _w, run: _r, ...instance } = parseInstance(doc?.instance);
      return { instance, instanceRef: ref };
    } catch (e) {
      if (!isMosaicError(e)) throw e;
      return c.fail([...at, "ref"], `${file}: instance.${e.message}`, "bad-instance-ref");
    }
  }
  return { instance: c.check(InlineInstanceSchema, value, at), instanceRef: null };
}

function loadModel(c: Checker, value: unknown, at: Path, harness: Harness): ModelScript | null {
  if (harness === "fake") {
    if (value !== undefined) c.fail(at, "the fake harness has no model: its messages run in sh");
    return null;
  }
  if (value === undefined) return c.fail(at, `the ${harness} harness needs a model script`, "missing-field");
  try {
    return loadModelScript(value, { source: c.file });
  } catch (e) {
    if (!isMosaicError(e)) throw e;
    const bare = e.message.slice(e.field.length + 2).replace(` (${c.file})`, "");
    return c.fail([...at, ...parseFieldPath(e.field)], bare, e.code);
  }
}

function loadSession(c: Checker, doc: Record<string, unknown>, at: Path, instancesDir: string): LoadedSession {
  const harness = doc.harness as Harness;
  const { instance, instanceRef } = loadInstance(c, doc.instance, [...at, "instance"], instancesDir);
  // The launcher runs the instance's own harness; a scenario that says another would test a session nobody launches.
  if (harness !== "fake" && instance.vars.harness !== harness)
    c.fail(
      [...at, "harness"],
      `the instance's vars.harness is ${instance.vars.harness ?? "unset"}; the launcher would run that, not ${harness}`,
    );
  return { harness, instance, instanceRef, model: loadModel(c, doc.model, [...at, "model"], harness) };
}

function loadAssertion(c: Checker, value: unknown, at: Path): Assertion {
  const kinds = Object.keys(ASSERTION_KINDS);
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return c.fail(at, `an assertion is an object with one of ${kinds.join(", ")}`);
  const keys = Object.keys(value).filter((k) => k !== "because");
  const kind = keys.filter((k) => Object.hasOwn(ASSERTION_KINDS, k));
  if (kind.length !== 1) {
    const stray = keys.find((k) => !Object.hasOwn(ASSERTION_KINDS, k));
    if (stray !== undefined) return c.fail([...at, stray], `not an assertion kind (one of ${kinds.join(", ")})`);
    return c.fail(at, `an assertion has exactly one kind; got ${keys.length === 0 ? "none" : keys.join(", ")}`);
  }
  return c.check(assertionSchema(kind[0] as AssertionKind), value, at) as Assertion;
}

/** What one session's fields say together; `at` is where the session stands in the file. */
function checkSession(c: Checker, s: LaunchedSession, at: Path, networkTrap: boolean): void {
  if (s.harness === "fake") {
    for (const k of ["gate", "drop_flags"] as const)
      if (s.break[k] !== undefined)
        c.fail([...at, "break", k], "the fake harness has no gate and no adapter flags to remove");
    for (const k of ["gate", "tmpdir"] as const)
      if (s.fault[k] !== undefined)
        c.fail([...at, "fault", k], "the fake harness has no gate and no harness TMPDIR to break");
  }
  if (s.fault.gate_timeout_seconds !== undefined && s.harness !== "claude-code")
    c.fail(
      [...at, "fault", "gate_timeout_seconds"],
      `only Claude Code's hook runs the gate under a timeout; the ${s.harness} harness has none`,
    );
  for (const [i, a] of s.assertions.entries()) {
    if ("trap_untouched" in a && !networkTrap)
      c.fail([...at, "assertions", i, "trap_untouched"], "no trap to be touched: set network_trap: true");
  }
  // A check over what the model saw needs a model; on the fake harness it could only be unobserved.
  for (const [i, a] of s.assertions.entries()) {
    const kind = Object.keys(a).find((k) => k !== "because") as AssertionKind;
    if (s.model === null && (kind.startsWith("tool_result_") || kind.startsWith("request_")))
      c.fail([...at, "assertions", i, kind], `${kind} reads what the model saw; the ${s.harness} harness has none`);
  }
}

/** What the fields say together: checks no single field's schema can make. */
function checkTogether(c: Checker, s: Scenario): void {
  checkSession(c, s, [], s.networkTrap);
  // A launch is answered by the instance it names; the main session must be one that may launch.
  if (s.launches.length > 0 && !heldActions(s.instance.actions).includes("launch"))
    c.fail(
      ["launches"],
      `the instance ${s.instance.instance} does not hold the launch action: its launch calls are refused before any launch`,
    );
  const names = new Set<string>();
  for (const [i, l] of s.launches.entries()) {
    checkSession(c, l, ["launches", i], s.networkTrap);
    const name = l.instance.instance;
    if (name === s.name)
      c.fail(
        ["launches", i, "instance"],
        `the main session's instance is named ${s.name} in the run; a launched one needs another name`,
      );
    if (names.has(name))
      c.fail(["launches", i, "instance"], `a second launched session of instance ${name}: a launch call names one`);
    names.add(name);
  }
}

/** The keys of the file tables (workspace.files, workspace.links, run_files): paths, which may hold template variables too. */
function keysOf(value: unknown, at: Path): Array<[string, Path]> {
  const tables: Array<[unknown, Path]> =
    at[0] === "workspace"
      ? [
          [(value as Record<string, unknown> | undefined)?.files, [...at, "files"]],
          [(value as Record<string, unknown> | undefined)?.links, [...at, "links"]],
        ]
      : at[0] === "run_files"
        ? [[value, at]]
        : [];
  return tables.flatMap(([t, p]) =>
    typeof t === "object" && t !== null ? Object.keys(t).map((k): [string, Path] => [k, [...p, k]]) : [],
  );
}

/** The template variables in one part of the scenario; `assertions` names where an assertion list starts, for the file_* rule. */
function checkStrings(c: Checker, value: unknown, at: Path, where: "model" | "assertions" | "other"): void {
  for (const [s, p] of [...stringsOf(value, at), ...keysOf(value, at)]) {
    for (const name of templateVarsIn(s)) {
      const problem = templateVarProblem(name, where);
      if (problem !== null) c.fail(p, problem, "bad-template-var");
    }
    // p is [...at, index, kind, ...]: a file_* assertion's path starts at a path template variable or /.
    if (where === "assertions" && p.length >= at.length + 2 && /^file_/.test(String(p[at.length + 1]))) {
      const first = /^\{\{([^{}]*)\}\}/.exec(s)?.[1];
      if (first !== undefined && !TEMPLATE_VARS[first as TemplateVar]?.path)
        c.fail(p, `{{${first}}} is not a path; a host file starts with / or a path template variable`);
    }
  }
}

/** Every template variable in the scenario stands where the runner fills it. */
function checkTemplateVars(c: Checker, raw: Record<string, unknown>): void {
  for (const [key, where] of [
    ["model", "model"],
    ["workspace", "other"],
    ["run_files", "other"],
    ["messages", "other"],
    ["assertions", "assertions"],
  ] as const)
    checkStrings(c, raw[key], [key], where);
  const launches = Array.isArray(raw.launches) ? (raw.launches as unknown[]) : [];
  for (const [i, l] of launches.entries()) {
    const r = (typeof l === "object" && l !== null ? l : {}) as Record<string, unknown>;
    checkStrings(c, r.model, ["launches", i, "model"], "model");
    checkStrings(c, r.assertions, ["launches", i, "assertions"], "assertions");
  }
}

export interface LoadOptions {
  /** Where `instance: {ref}` looks; scenarios/instances/ by default. */
  instancesDir?: string;
}

/** Loads and checks one scenario from its text; `file` names it in errors. */
export function parseScenario(text: string, file: string, opts: LoadOptions = {}): Scenario {
  const lc = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lc, prettyErrors: false, uniqueKeys: true });
  const c = new Checker(file, doc, lc);
  const yamlError = doc.errors[0];
  if (yamlError !== undefined)
    throw new ScenarioError(
      "bad-yaml",
      "(document)",
      yamlError.message.split("\n")[0]!,
      file,
      yamlError.linePos?.[0].line ?? null,
    );
  const raw = doc.toJS() as unknown;
  const outer = c.check(ScenarioOuterSchema, raw, []);
  const r = raw as Record<string, unknown>;
  const stem = basename(file).replace(/\.ya?ml$/, "");
  if (outer.name !== stem)
    c.fail(["name"], `the name is ${outer.name}, the file is ${stem}.yaml: one scenario per file, named alike`);
  const instancesDir = opts.instancesDir ?? INSTANCES_DIR;
  const main = loadSession(c, r, [], instancesDir);
  checkTemplateVars(c, r);
  const assertions = (r.assertions as unknown[]).map((a, i) => loadAssertion(c, a, ["assertions", i]));
  const launches = (outer.launches ?? []).map((raw, i): LaunchedSession => {
    const at = ["launches", i];
    const l = c.check(LaunchedOuterSchema, raw, at);
    const doc = raw as Record<string, unknown>;
    return {
      ...loadSession(c, doc, at, instancesDir),
      break: l.break ?? {},
      fault: l.fault ?? {},
      assertions: (doc.assertions as unknown[]).map((a, j) => loadAssertion(c, a, [...at, "assertions", j])),
    };
  });
  const scenario: Scenario = {
    file,
    name: outer.name,
    description: outer.description,
    ...main,
    workspace: { files: outer.workspace?.files ?? {}, links: outer.workspace?.links ?? {} },
    runFiles: outer.run_files ?? {},
    neighbourProcess: outer.neighbour_process ?? false,
    networkTrap: outer.network_trap ?? false,
    turnTimeoutSeconds: outer.turn_timeout_seconds ?? 60,
    messages: outer.messages,
    break: outer.break ?? {},
    fault: outer.fault ?? {},
    assertions,
    launches,
  };
  checkTogether(c, scenario);
  return scenario;
}

/** Loads and checks one scenario file. */
export function loadScenario(file: string, opts: LoadOptions = {}): Scenario {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new ScenarioError("unreadable", "(file)", (e as Error).message, file, null);
  }
  return parseScenario(text, file, opts);
}

export const SCENARIOS_DIR = join(REPO_ROOT, "scenarios");

/** The scenario files directly under a directory (scenarios/ by default), sorted. */
export function scenarioFiles(dir = SCENARIOS_DIR): string[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith(".yaml"))
    .sort()
    .map((n) => join(dir, n));
}
