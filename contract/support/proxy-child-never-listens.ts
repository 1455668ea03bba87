// Preloaded (node --import) into a model proxy's process by a contract test: a process that
// starts, says something other than "listening" over its IPC channel, writes the file
// MOSAIC_TEST_SAID_FILE names once the message is out, and then neither listens nor ends (the
// proxy's own entry never runs).
import { writeFileSync } from "node:fs";

process.send!({ kind: "starting" }, undefined, undefined, () =>
  writeFileSync(process.env.MOSAIC_TEST_SAID_FILE!, "said"),
);
setInterval(() => {}, 1 << 30);
await new Promise(() => {});
