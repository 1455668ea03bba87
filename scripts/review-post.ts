// `npm run review:post`: the report as the pull request's comment, the verdict as the head's commit
// status ("proof review"); exits as the review did. See docs/review.md.
import { postStep } from "../src/review/pr-steps.ts";

process.exitCode = await postStep(process.cwd(), process.env, (s) => console.log(s));
