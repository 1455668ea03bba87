// One scenario run in its own process: `node run-child.ts <scenario.yaml> <id>`, its result as JSON
// on the last line of stdout. `npm start` runs each scenario this way so that side by side they
// share no event loop: the launcher's synchronous steps (version probes, the gate cache's warm-up)
// in one scenario would otherwise hold up the stand-in broker of another past its 2 s answer time.
import { ScenarioError, formatScenarioError, loadScenario } from "./load.ts";
import { runScenario } from "./run.ts";

const [file, id] = process.argv.slice(2);
if (file === undefined || id === undefined) {
  process.stderr.write("usage: run-child.ts <scenario.yaml> <id>\n");
  process.exit(2);
}
try {
  const result = await runScenario(loadScenario(file), { id });
  process.stdout.write(`\n${JSON.stringify(result)}\n`);
} catch (e) {
  // One line the parent can show: the scenario's own error, or what crashed.
  const why =
    e instanceof ScenarioError ? formatScenarioError(e) : e instanceof Error ? (e.stack ?? e.message) : String(e);
  process.stderr.write(`run-child: ${why.split("\n").join(" | ")}\n`);
  process.exitCode = 1;
}
