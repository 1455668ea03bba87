// Canaries: stand-in values a test plants where a session must not reach (a secret file, an env
// variable, a neighbour's memory) and then looks for in what the session could see or send. Each
// is unique, so a hit can only come from this plant.
import { randomUUID } from "node:crypto";

/** A fresh canary, readable in a failure message: `<label>-<uuid>`. */
export const makeCanary = (label: string): string => `${label}-${randomUUID()}`;

/**
 * A pattern (POSIX ERE and Perl alike) matching any canary made with `label`: a script that must
 * find a canary it was never told (in a process's memory) searches with this, so the two cannot drift.
 */
export const canaryPattern = (label: string): string =>
  `${label.replace(/[^A-Za-z0-9]/g, "\\$&")}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`;
