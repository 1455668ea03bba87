// `npm run review:wake`: the job of the "review submitted" workflow. It reads nothing and writes
// nothing: its finishing starts the proof review (review.yml, workflow_run) from the base branch.
// Imports nothing, so it runs before any npm ci.
import { readFileSync } from "node:fs";

const path = process.env.GITHUB_EVENT_PATH;
const event = path ? (JSON.parse(readFileSync(path, "utf8")) as { pull_request?: { number?: number } }) : {};
console.log(`review:wake: a review of #${event.pull_request?.number ?? "?"}; the proof review runs next`);
