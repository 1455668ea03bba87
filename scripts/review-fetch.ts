// `npm run review:fetch`: the pull request whose head the finished run tested, its reviews, and its
// commits as git objects, into .scratch/pr. Run by .github/workflows/review.yml. See docs/review.md.
import { fetchStep } from "../src/review/pr-steps.ts";

process.exitCode = await fetchStep(process.cwd(), process.env, (s) => console.log(s));
