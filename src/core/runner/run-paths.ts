/**
 * The run's sockets: made by the host in `<run>/sock/` (0700, the session's own) and bound
 * read-only into the sandbox, so a session cannot chmod them, or the directory, for another uid
 * to reach. The host listens on model.sock (its model proxy) and hands the runner tools.sock as an
 * inherited listening descriptor, since the runner cannot make a socket in a read-only directory.
 */
export function runSockets(runDir: string): { dir: string; tools: string; model: string } {
  const dir = `${runDir}/sock`;
  return { dir, tools: `${dir}/tools.sock`, model: `${dir}/model.sock` };
}

/** The descriptor the runner finds its listening tool socket on (after stdin, stdout, stderr and the seccomp program's 3). */
export const TOOL_SOCKET_FD = 4;
