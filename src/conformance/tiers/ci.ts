/** Whether this run is CI: CI set to anything but empty, "0" or "false", as vitest itself reads it. */
export function isCi(env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env.CI;
  return v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
}
