// A port free on the host's loopback, for a control or a bench that runs without --unshare-net and
// so must not take the model port another session may hold.
import { createServer } from "node:net";

/** A port free on the host's loopback now. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((ok) => s.close(() => ok()));
  return port;
}
