// node --import <this file> <entry>: appends the URL of every module the process loads (ESM and
// require alike) to the file LOAD_TRACE_OUT names, one per line, as it loads. A test reads which
// packages an entry point really reaches at runtime, which a static walk can miss.
import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";

const out = process.env.LOAD_TRACE_OUT;
if (out !== undefined && out !== "") {
  registerHooks({
    load(url, context, nextLoad) {
      appendFileSync(out, url + "\n");
      return nextLoad(url, context);
    },
  });
}

/** The package names (scope included) among loaded URLs, sorted: the last node_modules/ segment decides. */
export function loadedPackages(urls: readonly string[]): string[] {
  const names = new Set<string>();
  for (const u of urls) {
    const parts = u.split("/node_modules/");
    if (parts.length < 2) continue;
    const [first, second] = parts.at(-1)!.split("/");
    names.add(first!.startsWith("@") ? `${first}/${second}` : first!);
  }
  return [...names].sort();
}
