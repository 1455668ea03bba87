import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { bytesOf } from "../src/core/workspace/bytes.ts";
import { liveIt } from "../src/conformance/tiers/live-gate.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { DirChain } from "../src/host/dir-fd.ts";
import { applyRemedies, checkWorkspace, openWorkspaceView } from "../src/host/workspace-check.ts";
import { LEGIT_REPO } from "./support/workspace-cases.ts";
import { layOutBytes } from "./support/workspace-tree.ts";

// The host side of the end-of-session check on the real filesystem: what it cannot examine is a
// finding (never taken for absent), a directory is never reached through a link, and a move to a
// quarantine on another filesystem copies by descriptor, keeps links as links, and loses nothing.
const CHECK_AS = join(import.meta.dirname, "support/check-as.ts");
const USER = 65534;
const asRoot = process.getuid?.() === 0;
const raw = (bytes: string) => Buffer.from(bytes, "latin1");

describe("what the check cannot examine", () => {
  const scratch = makeScratch("ws-unreadable");
  afterAll(() => scratch.remove());

  it("a setuid file in a directory its owner may list but not search: found as unreadable, never taken for absent, and the workspace is unsafe (as uid 65534 under root, else as this uid)", () => {
    const ws = join(scratch.root, "ws");
    layOutBytes({ ...LEGIT_REPO, "/locked/rootshell": { file: "ELF\n", mode: 0o4755 } }, ws);
    if (asRoot) spawnSync("chown", ["-R", `${USER}:${USER}`, scratch.root]);
    chmodSync(join(ws, "locked"), 0o644);
    const argv = [process.execPath, CHECK_AS, ws, join(scratch.root, "q")];
    const as = asRoot ? ["setpriv", `--reuid=${USER}`, `--regid=${USER}`, "--clear-groups", "--", ...argv] : argv;
    const r = spawnSync(as[0]!, as.slice(1), { encoding: "utf8" });
    chmodSync(join(ws, "locked"), 0o755);
    const report = JSON.parse(r.stdout || `{"verdict":"no report: ${r.stderr.replaceAll('"', "'")}"}`);
    expect(report.verdict, "an entry the check cannot examine is never clean").toBe("unsafe");
    expect(
      report.failed.map((f: { kind: string; path: string }) => [f.kind, f.path]),
      "the file it could not examine is named",
    ).toEqual([["unreadable", "locked/rootshell"]]);
  });
});

describe("the check's acts never go through a link", () => {
  const scratch = makeScratch("ws-acts");
  afterAll(() => scratch.remove());

  it("a directory is reached only as itself: a link to one, at any level, is refused", () => {
    const ws = join(scratch.root, "ws");
    mkdirSync(join(ws, "real/inner"), { recursive: true });
    mkdirSync(join(scratch.root, "outside/inner"), { recursive: true });
    symlinkSync(join(scratch.root, "outside"), join(ws, "link"));
    const chain = new DirChain(ws, bytesOf(ws));
    const code = (dir: string) => {
      try {
        chain.fd(`${bytesOf(ws)}/${dir}`);
        return "opened";
      } catch (e) {
        return (e as NodeJS.ErrnoException).code;
      }
    };
    try {
      expect(code("real/inner")).toBe("opened");
      expect(["ELOOP", "ENOTDIR"], "the link itself").toContain(code("link"));
      expect(["ELOOP", "ENOTDIR"], "a directory beyond the link").toContain(code("link/inner"));
    } finally {
      chain.close();
    }
  });
});

describe("the check's view never follows a link", () => {
  const scratch = makeScratch("ws-view");
  afterAll(() => scratch.remove());

  it("asked about a link where no listing says what it is, the view says link: it never looks through it", () => {
    const ws = join(scratch.root, "ws");
    mkdirSync(join(scratch.root, "outside"), { recursive: true });
    mkdirSync(ws);
    symlinkSync(join(scratch.root, "outside"), join(ws, "escape"));
    const view = openWorkspaceView(ws);
    expect(view.lstat(`${view.root}/escape`)?.kind).toBe("link");
  });
});

describe("remedies planned on a workspace a racer has changed since", () => {
  const scratch = makeScratch("ws-stale");
  afterAll(() => scratch.remove());

  it("a setid file now a link to the founder's setuid file, a nested .git whose directory is now a link to the founder's repository, and a setid file beyond such a link: each fails, and nothing beyond a link changes", () => {
    const ws = join(scratch.root, "ws");
    const founder = join(scratch.root, "founder");
    mkdirSync(join(founder, "repo/.git"), { recursive: true });
    writeFileSync(join(founder, "repo/.git/HEAD"), "ref: refs/heads/main\n");
    writeFileSync(join(founder, "tool"), "ELF\n");
    chmodSync(join(founder, "tool"), 0o4755);
    mkdirSync(ws);
    symlinkSync(join(founder, "tool"), join(ws, "rootshell"));
    symlinkSync(join(founder, "repo"), join(ws, "sub"));
    symlinkSync(founder, join(ws, "bin"));
    const root = bytesOf(ws);
    const q = join(scratch.root, "q");
    const { done, failed } = applyRemedies(ws, q, [
      { op: "clear-setid", kind: "setid-file", path: `${root}/rootshell`, mode: 0o755, detail: "mode 4755" },
      {
        op: "move",
        kind: "nested-repository",
        from: `${root}/sub/.git`,
        to: `${bytesOf(q)}/files/sub/.git`,
        detail: "a .git dir below the root",
      },
      { op: "clear-setid", kind: "setid-file", path: `${root}/bin/tool`, mode: 0o755, detail: "mode 4755" },
    ]);
    expect(done, "nothing was done through a link").toEqual([]);
    expect(failed.map((f) => [f.kind, f.path, f.error])).toEqual([
      ["setid-file", "rootshell", "no longer a regular file"],
      ["nested-repository", "sub/.git", "its directory cannot be reached"],
      ["setid-file", "bin/tool", "its directory cannot be reached"],
    ]);
    expect(statSync(join(founder, "tool")).mode & 0o7777, "the founder's setuid file keeps its mode").toBe(0o4755);
    expect(statSync(join(founder, "repo/.git/HEAD")).isFile(), "the founder's repository keeps its .git").toBe(true);
  });
});

describe("with the real git: what the founder's git does before the check and after it", () => {
  const scratch = makeScratch("ws-real-git");
  afterAll(() => scratch.remove());
  const env = { PATH: "/usr/bin:/bin", HOME: "/nonexistent", GIT_CONFIG_NOSYSTEM: "1" };
  const git = (cwd: string, ...args: string[]) =>
    spawnSync("git", ["-c", "user.name=f", "-c", "user.email=f@invalid", "-c", "safe.directory=*", ...args], {
      cwd,
      encoding: "utf8",
      env,
    }).stdout.trim();
  const repo = (label: string) => {
    const ws = join(scratch.root, label);
    mkdirSync(ws);
    git(ws, "init", "-q");
    git(ws, "commit", "-q", "--allow-empty", "-m", "the commit stored");
    return ws;
  };

  it("a replace ref, loose and then packed: git show of the stored commit displays the session's other one until the check moves it out", () => {
    for (const packed of [false, true]) {
      const ws = repo(packed ? "replace-packed" : "replace-loose");
      const stored = git(ws, "rev-parse", "HEAD");
      git(ws, "commit", "-q", "--allow-empty", "-m", "what the session shows instead");
      git(ws, "replace", stored, git(ws, "rev-parse", "HEAD"));
      if (packed) git(ws, "pack-refs", "--all");
      expect(git(ws, "log", "-1", "--format=%s", stored), "the control: git shows the other commit").toBe(
        "what the session shows instead",
      );
      const report = checkWorkspace(ws, join(scratch.root, `q-${packed}`));
      // git pack-refs leaves refs/replace/ behind, empty: it goes too.
      expect(report.verdict === "quarantined" ? report.done.map((d) => [d.kind, d.path]) : report).toEqual(
        packed
          ? [
              ["replace-ref", ".git/packed-refs"],
              ["replace-ref", ".git/refs/replace"],
            ]
          : [["replace-ref", ".git/refs/replace"]],
      );
      expect(git(ws, "log", "-1", "--format=%s", stored), "after the check: the commit stored").toBe(
        "the commit stored",
      );
    }
  });

  it("config.worktree: what git sparse-checkout and git config --worktree write stays; an fsmonitor the session wrote there runs on git status until the check moves it out", () => {
    const ws = repo("worktree-config");
    git(ws, "config", "extensions.worktreeConfig", "true");
    git(ws, "sparse-checkout", "init", "--cone");
    git(ws, "config", "--worktree", "user.email", "me@example.invalid");
    expect(checkWorkspace(ws, join(scratch.root, "q-wt-legit")).verdict, "what git writes there is admitted").toBe(
      "clean",
    );
    const marker = join(scratch.root, "fsmonitor-ran");
    writeFileSync(join(ws, ".git/config.worktree"), `[core]\n\tfsmonitor = touch ${marker};:\n`);
    git(ws, "status");
    expect(existsSync(marker), "the control: git status runs it").toBe(true);
    rmSync(marker);
    const report = checkWorkspace(ws, join(scratch.root, "q-wt"));
    expect(report.verdict === "quarantined" ? report.done.map((d) => [d.kind, d.path]) : report).toEqual([
      ["worktree-config", ".git/config.worktree"],
    ]);
    git(ws, "status");
    expect(existsSync(marker), "after the check: git status runs nothing").toBe(false);
  });
});

describe("a quarantine on another filesystem", () => {
  const scratch = makeScratch("ws-exdev");
  const q = mkdtempSync("/dev/shm/mosaic-exdev-");
  afterAll(() => {
    scratch.remove();
    rmSync(q, { recursive: true, force: true });
  });
  const other = statSync(q).dev !== statSync(scratch.root).dev;
  const itOther = liveIt("another filesystem", other ? null : "/dev/shm is on the scratch's filesystem here");

  itOther(
    "a nested repository moves by copy and removal, both by descriptor: its files keep their bytes, a link stays a link, a setid bit does not travel, nothing beyond a link is copied, and nothing is left behind",
    () => {
      const ws = join(scratch.root, "ws");
      const outside = join(scratch.root, "outside");
      mkdirSync(outside);
      writeFileSync(join(outside, "secret"), "the founder's\n");
      layOutBytes(
        {
          ...LEGIT_REPO,
          "/sub/.git/HEAD": { file: "ref: refs/heads/main\n" },
          "/sub/.git/config": { file: "[core]\n\tfsmonitor = touch /tmp/pwned;:\n" },
          "/sub/.git/hooks/post-checkout": { file: "#!/bin/sh\n", mode: 0o4755 },
          "/sub/.git/logs/\xffname": "file",
          "/sub/.git/out": { link: "/outside" },
        },
        ws,
      );
      symlinkSync(outside, join(ws, "sub/.git/out-abs"));
      const quarantine = join(q, "run-1");
      const report = checkWorkspace(ws, quarantine);
      expect(report.verdict, JSON.stringify(report)).toBe("quarantined");
      const moved = join(quarantine, "files/sub/.git");
      expect(readFileSync(join(moved, "config"), "utf8")).toContain("fsmonitor");
      expect(readFileSync(raw(`${moved}/logs/\xffname`), "latin1")).toBe("/sub/.git/logs/\xffname");
      expect(lstatSync(join(moved, "hooks/post-checkout")).mode & 0o7777, "no setid bit in the copy").toBe(0o755);
      expect(readlinkSync(join(moved, "out-abs")), "a link is copied as a link").toBe(outside);
      expect(lstatSync(join(moved, "out-abs")).isSymbolicLink()).toBe(true);
      expect(lstatSync(join(ws, "sub/.git"), { throwIfNoEntry: false }), "gone from the workspace").toBeUndefined();
      expect(readFileSync(join(outside, "secret"), "utf8"), "beyond the link: untouched").toBe("the founder's\n");
    },
  );
});
