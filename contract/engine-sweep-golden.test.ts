// The golden helpers behind goldens-check (src/conformance/golden/golden.ts) on their edges: the
// names a golden may take, the header in every syntax, reading a writer back from a header that is
// not whole, the placeholders, the golden log and the listing of goldens/.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  GOLDEN_LOG_ENV,
  goldensCheckOutcome,
  GOLDEN_ROOT,
  REPO_ROOT,
  goldenHeader,
  goldenPath,
  listGoldens,
  normalise,
  readProvenance,
  recordGolden,
  withHeader,
} from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";

const scratch = makeScratch("engine-sweep-golden");
afterAll(() => scratch.remove());
const REGEN = " · regenerate: npm run goldens:update";

describe("a golden's path", () => {
  it("is goldens/<area>/<name>.<ext> for lower-case words, dashes, nested areas and dotted names", () => {
    expect(goldenPath("a", "b", "txt")).toBe(join(GOLDEN_ROOT, "a", "b.txt"));
    expect(goldenPath("sandbox/seccomp", "x86-64", "txt")).toBe(join(GOLDEN_ROOT, "sandbox/seccomp/x86-64.txt"));
    expect(goldenPath("a0-b/c/9d-e", "v1.2-x.", "jsonc")).toBe(join(GOLDEN_ROOT, "a0-b/c/9d-e/v1.2-x..jsonc"));
  });

  it("refuses an area that is not lower-case words and dashes, one folder after another", () => {
    for (const area of [
      "",
      "A",
      "Sandbox",
      "-a",
      "a_b",
      "a b",
      "a/",
      "/a",
      "a//b",
      "a/-b",
      "a/B",
      "a/b_c",
      "a.b",
      "a/..",
    ])
      expect(() => goldenPath(area, "b", "txt"), area).toThrow(
        `golden area ${JSON.stringify(area)}: lower-case words and dashes only`,
      );
  });

  it("refuses a name that is not lower-case words, dots and dashes", () => {
    for (const name of ["", "A", "aB", ".a", "-a", "a_b", "a/b", "a b", "Zz"])
      expect(() => goldenPath("a", name, "md"), name).toThrow(
        `golden name ${JSON.stringify(name)}: lower-case words, dots and dashes only`,
      );
  });
});

describe("a golden's header", () => {
  it("a shell golden takes #, and a header without a writer (or an empty one) names none", () => {
    expect(goldenHeader("plan", "sh", "contract/x.test.ts > t")).toBe(`# plan · from contract/x.test.ts > t${REGEN}`);
    expect(goldenHeader("plan", "sh")).toBe(`# plan${REGEN}`);
    expect(goldenHeader("plan", "jsonc", "")).toBe(`// plan${REGEN}`);
  });

  it("a what holding the bare separator is kept; only one that holds ' · from ' is refused", () => {
    expect(goldenHeader("a · b", "txt")).toBe(`# a · b${REGEN}`);
    expect(() => goldenHeader("a · from b", "md")).toThrow(
      `golden header "a · from b": " · " separates the header's parts; reword it`,
    );
  });

  it("withHeader ends the body with exactly one newline", () => {
    expect(withHeader("w", "txt", "x")).toBe(`# w${REGEN}\nx\n`);
    expect(withHeader("w", "txt", "x\n")).toBe(`# w${REGEN}\nx\n`);
    expect(withHeader("w", "txt", "\nx")).toBe(`# w${REGEN}\n\nx\n`);
    expect(withHeader("w", "txt", "")).toBe(`# w${REGEN}\n\n`);
  });
});

describe("reading the writer back from a header that is not whole", () => {
  it("none without both parts in order, or without ' > ' between file and test", () => {
    expect(readProvenance("")).toBeNull();
    expect(readProvenance("# x · from a.test.ts > t\n")).toBeNull();
    expect(readProvenance(`# x${REGEN} · from a.test.ts > t\n`)).toBeNull();
    expect(readProvenance(`# x · from a.test.ts${REGEN}\n`)).toBeNull();
    expect(readProvenance(`# bwrap argv > policy${REGEN}\n`), "a ' > ' without ' · from '").toBeNull();
  });

  it("the last ' · from ' and the first ' > ' after it split file from test", () => {
    expect(readProvenance(`# x · from y · from f.test.ts > d > t${REGEN}\nbody\n`)).toEqual({
      file: "f.test.ts",
      test: "d > t",
    });
    expect(readProvenance(`# x · from f.test.ts > t${REGEN}`)).toEqual({ file: "f.test.ts", test: "t" });
  });
});

describe("normalise", () => {
  it("longer values go first, every occurrence goes, and a missing or one-character value is left alone", () => {
    const text = "/r/run/x /r/y /r/run /r a/b /";
    expect(
      normalise(text, { "<repo>": "/r", "<none>": undefined, "<root>": "/", "<empty>": "", "<run>": "/r/run" }),
    ).toBe("<run>/x <repo>/y <run> <repo> a/b /");
  });
});

describe("the golden log", () => {
  it("a written golden is logged relative to the repository, one a line; without the variable nothing is", () => {
    const log = join(scratch.root, "golden-log.txt");
    const env = { [GOLDEN_LOG_ENV]: log };
    recordGolden(join(REPO_ROOT, "goldens/a/b.txt"), env);
    recordGolden(join(GOLDEN_ROOT, "c.md"), {});
    recordGolden(join(GOLDEN_ROOT, "d/e.jsonc"), env);
    recordGolden(join(GOLDEN_ROOT, "f.txt"), { [GOLDEN_LOG_ENV]: "" });
    expect(readFileSync(log, "utf8")).toBe("goldens/a/b.txt\ngoldens/d/e.jsonc\n");
  });
});

describe("listing goldens/", () => {
  it("every file under the folder, at any depth, relative to the repository and sorted", () => {
    const root = join(scratch.root, "goldens");
    for (const f of ["a/z.txt", "a.txt", "b/c/d.jsonc", "0.md", "b/a.sh"]) {
      mkdirSync(join(root, f, ".."), { recursive: true });
      writeFileSync(join(root, f), "x\n");
    }
    mkdirSync(join(root, "empty"));
    const rel = relative(REPO_ROOT, root);
    expect(listGoldens(root)).toEqual(["0.md", "a.txt", "a/z.txt", "b/a.sh", "b/c/d.jsonc"].map((f) => `${rel}/${f}`));
  });

  it("a folder that is not there, or a file, lists nothing", () => {
    expect(listGoldens(join(scratch.root, "absent"))).toEqual([]);
    const file = join(scratch.root, "plain.txt");
    writeFileSync(file, "x\n");
    expect(listGoldens(file)).toEqual([]);
  });
});

describe("goldens-check's verdict on several orphans", () => {
  it("counts them, lists each on its own line and removes them with one git rm", () => {
    const onDisk = ["goldens/a.txt", "goldens/b.txt", "goldens/c/d.txt"];
    expect(goldensCheckOutcome(onDisk, new Set(["goldens/b.txt"]), [], false)).toEqual({
      code: 0,
      out: [],
      err: [
        "goldens-check: 2 golden file(s) that no test wrote:",
        "  goldens/a.txt",
        "  goldens/c/d.txt",
        "Remove them after review: git rm goldens/a.txt goldens/c/d.txt",
      ],
    });
  });
});
