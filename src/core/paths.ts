/** POSIX path helpers over plain strings, so src/core never needs node:path's host-dependent form. */

export function isAbsolute(p: string): boolean {
  return p.startsWith("/");
}

/** True when p is absolute, has no empty, "." or ".." segment and no trailing slash (except "/"). */
export function isNormalAbsolute(p: string): boolean {
  if (!isAbsolute(p)) return false;
  if (p === "/") return true;
  if (p.endsWith("/")) return false;
  return p
    .slice(1)
    .split("/")
    .every((seg) => seg !== "" && seg !== "." && seg !== "..");
}

/** True when child is parent or lies below it. Both must be normal absolute paths. */
export function isWithin(child: string, parent: string): boolean {
  if (parent === "/") return true;
  return child === parent || child.startsWith(parent + "/");
}

/** The kernel's sun_path holds 108 bytes with its terminating NUL: a longer socket path is cut short, or refused. */
export const MAX_SOCKET_PATH_BYTES = 107;

export function socketPathFits(p: string): boolean {
  return new TextEncoder().encode(p).length <= MAX_SOCKET_PATH_BYTES;
}

export function hasControlChar(p: string): boolean {
  return p.includes("\n") || p.includes("\0") || p.includes("\r");
}
