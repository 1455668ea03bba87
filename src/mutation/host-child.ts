// A test host: one long-lived vitest instance over one copy of the tree, so a mutant costs a test
// run and not a vitest start. Before each run it invalidates the files the runner changed, so the
// next run compiles them afresh; the runner's sentinel proves that this reaches the tests.
import { relative, resolve } from "node:path";
import { createVitest } from "vitest/node";
import type { TestModule, TestRunResult, TestSpecification, Vitest } from "vitest/node";
import type { FromHost, HostArgs, ProjectInfo, SpecRequest, ToHost } from "./host-protocol.ts";
import { classifyErrors, type RunOutcome, type TestOutcome } from "./verdict.ts";

const args = JSON.parse(process.argv[2] ?? "{}") as HostArgs;
// CI semantics: a missing or different golden fails. Bless mode (args.update) writes it into this
// tree copy instead, and the runner restores the copy's goldens after every run.
process.env.CI = "true";

function send(msg: FromHost): void {
  process.send!(msg);
}

const vitest: Vitest = await createVitest(
  "test",
  {
    root: args.root,
    config: args.configFile ?? false,
    watch: false,
    update: args.update === true,
    reporters: [],
    pool: args.pool,
    ...(args.projects ? { project: args.projects } : {}),
  },
  { cacheDir: resolve(args.root, ".vite-cache") },
);

const specs = await vitest.globTestSpecifications();
const fileProject = new Map<string, string>();
for (const s of specs) {
  const rel = relative(args.root, s.moduleId);
  if (!fileProject.has(rel)) fileProject.set(rel, s.project.name);
}

function projectInfo(): ProjectInfo[] {
  return vitest.projects.map((p) => ({
    name: p.name,
    files: specs
      .filter((s) => s.project.name === p.name)
      .map((s) => relative(args.root, s.moduleId))
      .sort(),
  }));
}

function toSpecification(req: SpecRequest): TestSpecification {
  const project = fileProject.get(req.file);
  if (project === undefined) throw new Error(`${req.file} is not a test file of any vitest project`);
  const moduleId = resolve(args.root, req.file);
  return vitest
    .getProjectByName(project)
    .createSpecification(moduleId, req.names ? { testNames: req.names } : undefined);
}

/** One line for an error vitest reports: often a serialized object, not an Error. */
function describeError(e: unknown): string {
  if (typeof e === "object" && e !== null) {
    const o = e as { name?: unknown; message?: unknown };
    if (typeof o.message === "string")
      return `${typeof o.name === "string" ? o.name : "Error"}: ${o.message.split("\n")[0]}`;
    try {
      return JSON.stringify(e).slice(0, 300);
    } catch {
      return Object.prototype.toString.call(e);
    }
  }
  return String(e);
}

function outcomeOf(result: TestRunResult, requested: readonly string[], wallMs: number): RunOutcome {
  const wanted = new Set(requested.map((f) => resolve(args.root, f)));
  const modules: TestModule[] = result.testModules.filter((m) => wanted.has(m.moduleId));
  const tests: TestOutcome[] = [];
  const loadErrors: RunOutcome["loadErrors"] = [];
  const unhandled: string[] = result.unhandledErrors.map(describeError);
  let fileMs = 0;
  for (const m of modules) {
    const file = relative(args.root, m.moduleId);
    const d = m.diagnostic();
    fileMs += d.prepareDuration + d.environmentSetupDuration + d.setupDuration + d.collectDuration;
    let ran = 0;
    for (const t of m.children.allTests()) {
      const r = t.result();
      const state = r.state === "passed" || r.state === "failed" ? r.state : "skipped";
      if (state !== "skipped") ran++;
      const o: TestOutcome = { test: `${file} > ${t.fullName}`, state, durationMs: t.diagnostic()?.duration ?? 0 };
      if (r.state === "failed") o.failure = classifyErrors(r.errors ?? []);
      tests.push(o);
    }
    const errors = m.errors();
    if (errors.length > 0) {
      const message = errors.map((e) => `${e.name ?? "Error"}: ${e.message ?? ""}`.split("\n")[0]).join("; ");
      if (ran === 0) loadErrors.push({ file, message });
      else unhandled.push(`${file}: ${message}`);
    }
  }
  for (const f of requested)
    if (!modules.some((m) => m.moduleId === resolve(args.root, f)))
      loadErrors.push({ file: f, message: "the test file did not report" });
  return { tests, loadErrors, unhandled, wallMs, fileMs };
}

type GraphNode = { file?: string | null; importedModules: Set<GraphNode> };
type GraphEnv = { moduleGraph: { getModuleById(id: string): GraphNode | undefined } };

/**
 * Every file vitest's module graph holds for the test files (each project's vite environments),
 * with their projects' setup and global setup files and what those import: the modules a run
 * loaded, whether or not this run compiled them afresh. Packages are left out (the lockfile is in
 * every key).
 */
function loadedModules(files: readonly string[]): string[] {
  const out = new Set<string>();
  const seen = new Set<GraphNode>();
  const visit = (n: GraphNode | undefined) => {
    if (n === undefined || seen.has(n)) return;
    seen.add(n);
    if (n.file && n.file.startsWith(args.root + "/") && !n.file.includes("/node_modules/")) out.add(n.file);
    n.importedModules.forEach(visit);
  };
  for (const f of files) {
    const project = vitest.getProjectByName(fileProject.get(f) ?? "");
    const roots = [resolve(args.root, f), ...project.config.setupFiles, ...project.config.globalSetup];
    for (const r of roots) {
      out.add(r);
      for (const env of Object.values(project.vite.environments as Record<string, GraphEnv>))
        visit(env.moduleGraph.getModuleById(r));
    }
  }
  return [...out].sort();
}

async function run(msg: Extract<ToHost, { type: "run" }>): Promise<void> {
  try {
    for (const f of msg.changed) vitest.invalidateFile(resolve(args.root, f));
    const start = performance.now();
    // A host started ordinary writes goldens for this one run only, then is ordinary again.
    const updating = msg.update === true && args.update !== true;
    if (updating) vitest.enableSnapshotUpdate();
    const result = await vitest
      .runTestSpecifications(msg.specs.map(toSpecification))
      .finally(() => updating && vitest.resetSnapshotUpdate());
    send({
      type: "result",
      id: msg.id,
      outcome: outcomeOf(
        result,
        msg.specs.map((s) => s.file),
        performance.now() - start,
      ),
      loaded: loadedModules(msg.specs.map((s) => s.file)),
    });
  } catch (e) {
    send({ type: "failed", id: msg.id, message: e instanceof Error ? (e.stack ?? e.message) : String(e) });
  }
}

// One run at a time: the runner waits for each result before it changes the tree again.
let queue = Promise.resolve();
process.on("message", (msg: ToHost) => {
  if (msg.type === "close") {
    queue = queue.then(async () => {
      await vitest.close();
      process.exit(0);
    });
    return;
  }
  queue = queue.then(() => run(msg));
});

// The runner gone means nobody will stop a mutant's endless loop: go with it.
process.on("disconnect", () => process.exit(1));

send({ type: "ready", projects: projectInfo() });
