// `npm run review:pr`: the base's review of the pull request's head (goldens and proof, approvals
// from its reviews), into .scratch/pr/report.md and the job summary. See docs/review.md.
import { reviewStep } from "../src/review/pr-steps.ts";

process.exitCode = reviewStep(process.cwd(), process.env, (s) => console.log(s));
