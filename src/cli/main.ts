#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isMosaicError } from "../core/errors.ts";
import { parseSandboxSpec } from "../core/sandbox/spec-schema.ts";
import { readHostFacts } from "../host/host-facts.ts";
import { sandboxProblem } from "../host/sandbox-probe.ts";
import { planReport, renderPlanText } from "./plan-report.ts";

const USAGE = `usage: mosaic-harness plan <spec.json> [--json]

  plan   print the bind table, the bwrap argv and this machine's sandbox probe for a session spec

exit codes: 0 plan printed and the probe passed; 2 bad arguments or spec; 3 the probe failed`;

function main(argv: string[]): number {
  const [command, ...rest] = argv;
  if (command === "--help" || command === "-h") {
    console.log(USAGE);
    return 0;
  }
  if (command !== "plan") {
    console.error(command === undefined ? USAGE : `mosaic-harness: unknown command ${JSON.stringify(command)}\n${USAGE}`);
    return 2;
  }
  const json = rest.includes("--json");
  const unknown = rest.filter((a) => a.startsWith("-") && a !== "--json");
  const files = rest.filter((a) => !a.startsWith("-"));
  if (unknown.length > 0 || files.length !== 1) {
    console.error(`mosaic-harness plan: ${unknown.length > 0 ? `unknown option ${unknown[0]}` : "expected exactly one spec file"}\n${USAGE}`);
    return 2;
  }
  const file = resolve(files[0]!);
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
    const report = planReport(spec, facts, sandboxProblem(facts));
    process.stdout.write(json ? JSON.stringify(report, null, 2) + "\n" : renderPlanText(report));
    return report.probe.ok ? 0 : 3;
  } catch (e) {
    if (!isMosaicError(e)) throw e;
    console.error(`mosaic-harness plan: ${file}: ${e.message} [${e.code}]`);
    return 2;
  }
}

process.exitCode = main(process.argv.slice(2));
