// goldens-check after a whole contract run (scripts/goldens-check.ts, its verdict checkGoldens):
// a missing golden log fails, a golden no test wrote fails under CI and is listed locally, a golden
// whose header names no writer fails anywhere. On real files in a scratch root, in-process.
import { mkdirSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, checkGoldens, withHeader } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("goldens-check");
afterAll(() => scratch.remove());
const FROM = "contract/golden-header.test.ts > a golden's header names the test that wrote it > t";

/** A goldens folder with these files (name → text) and a log naming the ones in `logged` ("" an empty line). */
function tree(name: string, files: Record<string, string>, logged: string[] | null) {
  const dir = join(scratch.root, name);
  const goldens = join(dir, "goldens");
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(join(goldens, f, ".."), { recursive: true });
    writeFileSync(join(goldens, f), text);
  }
  const rel = (f: string) => relative(REPO_ROOT, join(goldens, f));
  const log = join(dir, "golden-log.txt");
  if (logged !== null) writeFileSync(log, logged.map((f) => (f === "" ? "\n" : `${rel(f)}\n`)).join(""));
  return { log, goldens, rel };
}

describe("goldens-check over a whole contract run", () => {
  it("every golden written and named: exit 0, counting the goldens written", () => {
    const t = tree(
      "all",
      { "a.txt": withHeader("a", "txt", "x\n", FROM), "d/b.txt": withHeader("b", "txt", "y\n", FROM) },
      ["a.txt", "", "d/b.txt"],
    );
    expect(checkGoldens(t.log, t.goldens, true)).toEqual({
      code: 0,
      out: ["goldens-check: 2 goldens written, no orphan"],
      err: [],
    });
  });

  it("one orphan among written goldens fails under CI, with the command that removes it; locally it is listed and passes", () => {
    const t = tree(
      "orphan",
      { "a.txt": withHeader("a", "txt", "x\n", FROM), "b.txt": withHeader("b", "txt", "y\n", FROM) },
      ["a.txt", ""],
    );
    const err = [
      "goldens-check: 1 golden file(s) that no test wrote:",
      `  ${t.rel("b.txt")}`,
      `Remove them after review: git rm ${t.rel("b.txt")}`,
    ];
    expect(checkGoldens(t.log, t.goldens, true)).toEqual({ code: 1, out: [], err });
    expect(checkGoldens(t.log, t.goldens, false)).toEqual({ code: 0, out: [], err });
  });

  it("a golden whose header names no test, or a test file that is not there, fails even locally", () => {
    const t = tree(
      "unnamed",
      {
        "a.txt": withHeader("a", "txt", "x\n"),
        "b.txt": withHeader("b", "txt", "x\n", "contract/gone.test.ts > t"),
        "c.txt": withHeader("c", "txt", "x\n", FROM),
      },
      ["a.txt", "b.txt", "c.txt"],
    );
    expect(checkGoldens(t.log, t.goldens, false)).toEqual({
      code: 1,
      out: [],
      err: [
        "goldens-check: 2 golden(s) whose writer cannot be opened:",
        `  ${t.rel("a.txt")}: its header names no test that wrote it`,
        `  ${t.rel("b.txt")}: its header names contract/gone.test.ts, which is not in the repository`,
        "Regenerate them: npm run goldens:update",
      ],
    });
  });

  it("without the run's golden log it fails, naming the log and the run that writes it", () => {
    const t = tree("nolog", { "a.txt": withHeader("a", "txt", "x\n", FROM) }, null);
    expect(checkGoldens(t.log, t.goldens, false)).toEqual({
      code: 1,
      out: [],
      err: [`goldens-check: ${t.log} is missing; run the whole contract tier first (npm run test:contract)`],
    });
  });
});
