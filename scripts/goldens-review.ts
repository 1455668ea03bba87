// `npm run goldens:review`: every changed golden, ranked by what it does to confinement. See docs/review.md.
import { main } from "../src/review/cli.ts";

process.exitCode = main(
  process.argv.slice(2),
  process.cwd(),
  (s) => process.stdout.write(s),
  (s) => process.stderr.write(s),
);
