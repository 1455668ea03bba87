// npm run schema: writes scenarios/scenario.schema.json from the zod format, for editors (each
// scenario names it in a yaml-language-server comment). contract/scenario.test.ts keeps it current.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { renderScenarioSchema } from "../src/conformance/scenario/schema.ts";

const file = join(REPO_ROOT, "scenarios/scenario.schema.json");
writeFileSync(file, renderScenarioSchema());
console.log(`wrote ${file}`);
