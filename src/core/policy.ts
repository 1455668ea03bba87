import type { Harness } from "./sandbox/types.ts";

/**
 * The gate's policy: written by the launch plan into bundle/policy.json, read by decide().
 * Metadata only: a credential appears as which set is present, never as a value.
 */
export interface Policy {
  harness: Harness;
  /** The workspace as given (the adapters cd into it; its real path may differ). */
  workspace: string;
  /** The session's HOME (<run>/home): what `~` expands to for Pi. */
  home: string;
  /** Built-in tool names of the harness the role's tool limit grants (Pi or Claude Code names). */
  builtInTools: string[];
  /** Typed tool names as the harness sees them (Claude Code: mcp__mosaic__<tool>). */
  typedTools: string[];
  /** Recorded, not enforced (see Limits). */
  network: string;
  /** The services the role needs. */
  services: string[];
  /** Which SESSION_CREDENTIALS set the host saw, or null; never a value. */
  credentials: { set: string | null };
}
