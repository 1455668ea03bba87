// `npm run mutants`: the safety table. See mutants/README.md and docs/mutants.md.
import { main } from "../src/mutation/cli.ts";

process.exitCode = await main(process.argv.slice(2), process.cwd());
