// Preloaded (node --import) into a model proxy's process by a contract test: its descriptor 4,
// the listening socket the host handed it, becomes /dev/null (the lowest free descriptor after
// the close), a descriptor the proxy cannot serve.
import { closeSync, openSync } from "node:fs";

closeSync(4);
const fd = openSync("/dev/null", "r");
if (fd !== 4) throw new Error(`/dev/null opened as ${fd}, not 4`);
