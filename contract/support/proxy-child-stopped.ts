// Preloaded (node --import) into a model proxy's process by a contract test: it writes the
// process's pid to the file MOSAIC_TEST_PID_FILE names, so the test can stop or watch that
// process and no other (tests in parallel run proxies of their own).
import { writeFileSync } from "node:fs";

const file = process.env.MOSAIC_TEST_PID_FILE;
if (file !== undefined) writeFileSync(file, String(process.pid));
