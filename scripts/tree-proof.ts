// `node scripts/tree-proof.ts <report>`: after a tier passed, records beside its JUnit report the
// sha256 of the tree it ran on, so the mutation runner can take that green run instead of proving
// the same tree green again (src/mutation/proven-run.ts).
import { resolve } from "node:path";
import { proofOf, writeProof } from "../src/mutation/proven-run.ts";

const report = process.argv[2];
if (report === undefined) {
  console.error("usage: node scripts/tree-proof.ts <junit report>");
  process.exit(2);
}
const hash = writeProof(process.cwd(), resolve(report));
console.log(
  hash === null
    ? `tree-proof: not a git work tree; ${report} proves nothing for the mutation run`
    : `tree-proof: ${proofOf(report)}: ${hash.slice(0, 16)}…`,
);
