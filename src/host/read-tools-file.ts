import { readFileSync } from "node:fs";
import { parseToolsFile, type ToolsFile } from "../core/tools/tools-file.ts";

export const TOOLS_FILE_ENV = "MOSAIC_TOOLS_FILE";

/** The bundle's tools.json named by MOSAIC_TOOLS_FILE; a problem names the file and what is wrong. */
export function readToolsFile(env: NodeJS.ProcessEnv): ToolsFile {
  const file = env[TOOLS_FILE_ENV];
  if (file === undefined || file === "") return { problem: `${TOOLS_FILE_ENV} is not set` };
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    return { problem: `${file}: ${e instanceof Error ? e.message : String(e)}` };
  }
  const parsed = parseToolsFile(text);
  return "problem" in parsed ? { problem: `${file}: ${parsed.problem}` } : parsed;
}
