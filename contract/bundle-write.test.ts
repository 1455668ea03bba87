import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { sha256 } from "../src/core/bundle/digest.ts";
import { writeBundle } from "../src/host/write-bundle.ts";
import { decideLaunch } from "../src/core/launch/decide-launch.ts";
import { isMosaicError } from "../src/core/errors.ts";
import { readSourceDigests, SOURCE_FILES } from "../src/host/launch-facts.ts";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { loadCase } from "./support/launch-cases.ts";

function claudeBundle(): Record<string, string> {
  const c = loadCase("claude-pm");
  const d = decideLaunch(c.instance, c.settings, c.facts, c.env);
  if (d.kind !== "launch") throw new Error(d.message);
  return d.plan.bundle;
}

/** Every file under dir with its mode and content, to show a failed write changed nothing. */
function snapshot(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  const out: Record<string, string> = { ".": (statSync(dir).mode & 0o777).toString(8) };
  for (const n of readdirSync(dir).sort())
    out[n] = `${(statSync(join(dir, n)).mode & 0o777).toString(8)} ${readFileSync(join(dir, n), "utf8")}`;
  return out;
}

function thrown(f: () => void): { code?: string } {
  try {
    f();
  } catch (e) {
    expect(isMosaicError(e), String(e)).toBe(true);
    return e as { code: string };
  }
  return expect.fail("expected writeBundle to throw");
}

describe("writeBundle", () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "mosaic-bundle-"));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("writes the directory 0700 and every file 0600 with the planned content", () => {
    const files = claudeBundle();
    const dir = join(root, "bundle");
    writeBundle(dir, files);
    expect(statSync(dir).mode & 0o777, "bundle directory mode").toBe(0o700);
    expect(readdirSync(dir).sort()).toEqual(Object.keys(files).sort());
    for (const [n, body] of Object.entries(files)) {
      expect(statSync(join(dir, n)).mode & 0o777, `${n} mode`).toBe(0o600);
      expect(readFileSync(join(dir, n), "utf8")).toBe(body);
    }
  });

  it("a second write fails and changes nothing", () => {
    const dir = join(root, "bundle");
    writeBundle(dir, claudeBundle());
    const before = snapshot(dir);
    const other = Object.fromEntries(Object.keys(claudeBundle()).map((n) => [n, "replaced\n"]));
    expect(thrown(() => writeBundle(dir, other)).code).toBe("bundle-exists");
    expect(snapshot(dir)).toEqual(before);
  });

  it("a failure halfway removes what it wrote and keeps what was there", () => {
    const dir = join(root, "bundle");
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "tools.json"), "already here\n", { mode: 0o600 });
    const before = snapshot(dir);
    expect(thrown(() => writeBundle(dir, claudeBundle())).code).toBe("bundle-exists");
    expect(snapshot(dir), "prompt.md and policy.json, written before tools.json failed, are gone").toEqual(before);
  });

  it("a failure halfway in a directory it made removes the directory too", () => {
    const dir = join(root, "bundle");
    // prompt.md is written, then the over-long name fails (ENAMETOOLONG): a real failure halfway.
    expect(() => writeBundle(dir, { "prompt.md": "x\n", ["n".repeat(300)]: "y\n" })).toThrow(/ENAMETOOLONG/);
    expect(existsSync(dir)).toBe(false);
  });

  it("a file name that is not one path segment is refused before anything is written", () => {
    const dir = join(root, "bundle");
    expect(thrown(() => writeBundle(dir, { "prompt.md": "x\n", "../escape": "y\n" })).code).toBe("bad-bundle-file");
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(root, "escape"))).toBe(false);
  });

  // Every mode of an existing directory that lets the group or others list, enter or write it.
  it.each(["710", "720", "740", "750", "770", "730", "701", "702", "704", "707", "703", "755", "777"])(
    "refuses an existing bundle directory with mode %s, writing nothing",
    (octal) => {
      const mode = Number.parseInt(octal, 8);
      const dir = join(root, "existing");
      mkdirSync(dir);
      chmodSync(dir, mode);
      expect(
        thrown(() => writeBundle(dir, { "prompt.md": "x\n" })).code,
        "a bundle directory the group or others can enter is refused",
      ).toBe("bundle-dir");
      expect(readdirSync(dir)).toEqual([]);
      chmodSync(dir, 0o700);
      writeBundle(dir, { "prompt.md": "x\n" });
      expect(readdirSync(dir), "positive control: the same directory at 700 is used").toEqual(["prompt.md"]);
    },
  );

  it("refuses an existing 700 directory owned by another user, who could replace its files after the write", () => {
    let foreign = "/root";
    if (process.getuid!() === 0) {
      foreign = join(root, "foreign");
      mkdirSync(foreign, { mode: 0o700 });
      chownSync(foreign, 65534, 65534);
    }
    const st = lstatSync(foreign);
    expect(
      [st.uid !== process.getuid!(), st.mode & 0o077],
      `${foreign} must be another user's directory at 700 for this arm`,
    ).toEqual([true, 0]);
    expect(
      thrown(() => writeBundle(foreign, { "prompt.md": "x\n" })).code,
      "another user's bundle directory is refused",
    ).toBe("bundle-dir");
    expect(existsSync(join(foreign, "prompt.md"))).toBe(false);
  });

  it("refuses a directory others can read, or a symlink in its place", () => {
    const open = join(root, "open");
    mkdirSync(open);
    chmodSync(open, 0o755);
    expect(thrown(() => writeBundle(open, { "prompt.md": "x\n" })).code).toBe("bundle-dir");
    expect(readdirSync(open)).toEqual([]);
    const link = join(root, "link");
    mkdirSync(join(root, "target"), { mode: 0o700 });
    symlinkSync(join(root, "target"), link);
    expect(thrown(() => writeBundle(link, { "prompt.md": "x\n" })).code).toBe("bundle-dir");
    expect(readdirSync(join(root, "target"))).toEqual([]);
  });
});

describe("sha256 in core", () => {
  it("gives the FIPS 180-4 known answers", () => {
    expect(sha256("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(sha256("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  });
});

describe("source digests", () => {
  it("are the sha256 of the real files, and absent ones say so", () => {
    const real = readSourceDigests(REPO_ROOT);
    expect(real.tools).toBe(
      createHash("sha256")
        .update(readFileSync(join(REPO_ROOT, SOURCE_FILES.tools)))
        .digest("hex"),
    );
    for (const [k, rel] of Object.entries(SOURCE_FILES)) {
      const path = join(REPO_ROOT, rel);
      expect(real[k as keyof typeof real], rel).toBe(
        existsSync(path) ? createHash("sha256").update(readFileSync(path)).digest("hex") : "absent",
      );
    }
    const empty = mkdtempSync(join(tmpdir(), "mosaic-empty-"));
    try {
      expect(Object.values(readSourceDigests(empty))).toEqual(["absent", "absent", "absent", "absent"]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
