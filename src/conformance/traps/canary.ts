// Canaries: stand-in values a test plants where a session must not reach (a secret file, an env
// variable, a neighbour's memory) and then looks for in what the session could see or send. Each
// is unique, so a hit can only come from this plant.
import { randomUUID } from "node:crypto";

/** A fresh canary, readable in a failure message: `<label>-<uuid>`. */
export const makeCanary = (label: string): string => `${label}-${randomUUID()}`;
