import type { FsView } from "./fs-view.ts";

/** Linux's MAXSYMLINKS: the kernel gives up (ELOOP) after 40 links in one lookup. */
export const MAX_LINKS = 40;

export type Resolution =
  /** exists is false when the path ends in names that do not exist yet (a file to be written). */
  | { kind: "resolved"; path: string; exists: boolean }
  /** A link on the way names something that does not exist: a write through it would create it. */
  | { kind: "dangling"; link: string; target: string }
  | { kind: "too-many-links"; link: string }
  | { kind: "not-a-directory"; at: string }
  | { kind: "unreadable"; at: string; why: string };

type Pending = { name: string; viaLink: { link: string; target: string } | null };

function segments(p: string, viaLink: Pending["viaLink"]): Pending[] {
  return p
    .split("/")
    .filter((s) => s !== "" && s !== ".")
    .map((name) => ({ name, viaLink }));
}

/**
 * Resolves an absolute path the way the kernel's lookup does, one name at a time over the view:
 * a link's target replaces it (from "/" when absolute), ".." leaves the directory actually
 * reached. Names past the last existing one are kept as written, so a path to a new file
 * resolves too. Never throws.
 */
export function resolvePhysical(fs: FsView, absPath: string): Resolution {
  // Stack of names still to walk, next one last.
  const pending = segments(absPath, null).reverse();
  const done: string[] = [];
  let missingTail = 0;
  let links = 0;
  while (pending.length > 0) {
    const c = pending.pop()!;
    if (c.name === "..") {
      done.pop();
      if (missingTail > 0) missingTail--;
      continue;
    }
    if (missingTail > 0) {
      done.push(c.name);
      missingTail++;
      continue;
    }
    const here = "/" + [...done, c.name].join("/");
    const e = fs.lstat(here);
    switch (e.kind) {
      case "dir":
        done.push(c.name);
        break;
      case "file":
        if (pending.length > 0) return { kind: "not-a-directory", at: here };
        done.push(c.name);
        break;
      case "link":
        links++;
        // safety: gate-no-link-limit
        if (links > MAX_LINKS) return { kind: "too-many-links", link: here };
        if (e.target === "") return { kind: "dangling", link: here, target: "" };
        if (e.target.startsWith("/")) done.length = 0;
        pending.push(...segments(e.target, { link: here, target: e.target }).reverse());
        break;
      case "missing":
        // A name that came from a link's target and is not there: the link dangles, at
        // whatever depth, even when it points inside.
        // safety: gate-no-dangling-check
        if (c.viaLink !== null) return { kind: "dangling", link: c.viaLink.link, target: c.viaLink.target };
        done.push(c.name);
        missingTail = 1;
        break;
      case "unreadable":
        // A name the view cannot see through (EACCES, ENAMETOOLONG): nothing is known past it.
        return { kind: "unreadable", at: here, why: e.why }; // safety: gate-unreadable-as-missing
    }
  }
  return { kind: "resolved", path: "/" + done.join("/"), exists: missingTail === 0 };
}
