// Preloaded (node --import) into a model proxy's process by a contract test: on SIGUSR2 the
// proxy's server hears an accept that failed (EMFILE, as when the process is out of descriptors),
// then the file MOSAIC_TEST_HEARD_FILE names is written; the pid goes to MOSAIC_TEST_PID_FILE.
import { writeFileSync } from "node:fs";
import { Server } from "node:net";

writeFileSync(process.env.MOSAIC_TEST_PID_FILE!, String(process.pid));
const listen = Server.prototype.listen;
Server.prototype.listen = function (this: Server, ...args: unknown[]) {
  process.on("SIGUSR2", () => {
    this.emit("error", Object.assign(new Error("accept EMFILE"), { code: "EMFILE", syscall: "accept" }));
    writeFileSync(process.env.MOSAIC_TEST_HEARD_FILE!, "heard");
  });
  return (listen as (...a: unknown[]) => Server).apply(this, args);
} as Server["listen"];
