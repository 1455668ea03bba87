#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isMosaicError } from "../core/errors.ts";
import { parseSandboxSpec } from "../core/sandbox/spec-schema.ts";
import { readHostFacts } from "../host/host-facts.ts";
import { sandboxProblem } from "../host/sandbox-probe.ts";
import { realFsView } from "../host/fs-view.ts";
import { USAGE, parseCliArgs } from "./args.ts";
import { planReport, renderPlanText } from "./plan-report.ts";

async function main(argv: string[]): Promise<number> {
  const cmd = parseCliArgs(argv);
  if (cmd.kind === "help") {
    console.log(USAGE);
    return 0;
  }
  if (cmd.kind === "usage-error") {
    console.error(`mosaic-harness: ${cmd.message}\n${USAGE}`);
    return 2;
  }
  // Loaded only here: the scenario runner pulls in the verification engine, which plan does not need.
  if (cmd.kind === "run") return (await import("./run-command.ts")).runCommand(cmd);
  const file = resolve(cmd.file);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, "utf8"));
  } catch (e) {
    console.error(`mosaic-harness plan: ${file}: ${(e as Error).message}`);
    return 2;
  }
  try {
    const spec = parseSandboxSpec(doc);
    const facts = readHostFacts({ repo: spec.repo });
    const report = planReport(spec, facts, sandboxProblem(facts), realFsView());
    process.stdout.write(cmd.json ? JSON.stringify(report, null, 2) + "\n" : renderPlanText(report));
    return report.probe.ok ? 0 : 3;
  } catch (e) {
    if (!isMosaicError(e)) throw e;
    console.error(`mosaic-harness plan: ${file}: ${e.message} [${e.code}]`);
    return 2;
  }
}

process.exitCode = await main(process.argv.slice(2));
