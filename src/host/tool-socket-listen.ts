import { chmodSync, chownSync, renameSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import type { SessionIdentity } from "../core/sandbox/types.ts";

export interface HeldSocket {
  /** The listening descriptor, for the sandbox's stdio. */
  fd: number;
  /** Closes the host's copy once the sandbox holds its own; the socket file stays. */
  release(): void;
}

/**
 * Makes the run's tool socket on the host: listening, mode 0600, the session's, at `path` in the
 * directory the sandbox binds read-only. The runner serves it from the inherited descriptor. It is
 * made under a temporary name and renamed into place, because node unlinks a server's path when it
 * closes, and the host closes its copy as soon as the sandbox has one.
 */
export function holdToolSocket(path: string, owner: SessionIdentity | null): HeldSocket {
  // No longer than the final name, so a path validateSpec passed fits as the temporary one too.
  const tmp = join(dirname(path), ".t");
  rmSync(tmp, { force: true });
  const server = createServer();
  // The handler never runs: nothing can connect before the sandbox starts, and the host's copy is
  // closed in the same tick as the spawn.
  server.listen(tmp);
  chmodSync(tmp, 0o600); // safety: tool-socket-mode
  if (owner !== null) chownSync(tmp, owner.uid, owner.gid);
  renameSync(tmp, path);
  const fd = (server as unknown as { _handle: { fd: number } })._handle.fd;
  return { fd, release: () => void server.close() };
}
