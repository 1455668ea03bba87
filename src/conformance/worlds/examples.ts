// The shipped example instances (scenarios/instances/<name>.yaml) and the settings every world
// launches them under, so a live test plans what a user's launch would.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import {
  parseInstance,
  parseSettings,
  type LaunchSettings,
  type ResolvedInstance,
} from "../../core/launch/instance.ts";
import { REPO_ROOT } from "../golden/golden.ts";

/** The settings a world launches under: one model, both harnesses. */
export function exampleSettings(): LaunchSettings {
  return parseSettings({ launch: { models: ["claude-sonnet-4-5"] }, plugins: { harness: ["pi", "claude-code"] } });
}

/** A shipped example instance with the world's own fields (workspace, run, instance) over it. */
export function exampleInstance(example: string, fields: Partial<ResolvedInstance> & Record<string, unknown>) {
  const doc = parse(readFileSync(join(REPO_ROOT, `scenarios/instances/${example}.yaml`), "utf8")) as {
    instance: Record<string, unknown>;
  };
  return parseInstance({ ...doc.instance, ...fields });
}
