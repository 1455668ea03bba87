// What many launches share under the launcher's state dir is written so that no reader ever sees
// another launch's half-written file: the seccomp program by content, once, through a rename; a
// launch record through a rename. And per-launch names never collide. A rename gives the path a
// new file: a descriptor opened before still reads the old bytes whole (the positive control shows
// an in-place write does not).
import { mkdirSync, openSync, readFileSync, readdirSync, readSync, statSync, writeFileSync, closeSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { sessionCgroupName } from "../src/core/sandbox/cgroups.ts";
import { writeFileAtomic } from "../src/host/atomic-write.ts";
import { LaunchRegistry, type LaunchRecord } from "../src/host/launch-registry.ts";
import { prepareSeccompFile } from "../src/host/sandbox-probe.ts";

const scratch = makeScratch("shared-state");
afterAll(() => scratch.remove());

/** All the bytes an open descriptor reads from its start. */
function readFd(fd: number): Buffer {
  const out: Buffer[] = [];
  const buf = Buffer.alloc(4096);
  for (let pos = 0; ; ) {
    const n = readSync(fd, buf, 0, buf.length, pos);
    if (n === 0) return Buffer.concat(out);
    out.push(Buffer.from(buf.subarray(0, n)));
    pos += n;
  }
}

describe("the seccomp program under the state dir", () => {
  const state = join(scratch.root, "state");
  const program = Uint8Array.from({ length: 64 }, (_, i) => i);

  it("is named by its content, and a second launch leaves the same file (same inode) alone", () => {
    const file = prepareSeccompFile(state, "x64", program);
    const ino = statSync(file).ino;
    expect(readFileSync(file)).toEqual(Buffer.from(program));
    expect(prepareSeccompFile(state, "x64", program)).toBe(file);
    expect(statSync(file).ino, "not rewritten").toBe(ino);
  });

  it("a file at its name with other bytes (a crashed writer's) is replaced by a rename: a reader that opened it keeps what it read", () => {
    const file = prepareSeccompFile(state, "x64", program);
    writeFileSync(file, program.subarray(0, 24));
    const fd = openSync(file, "r");
    const ino = statSync(file).ino;
    prepareSeccompFile(state, "x64", program);
    expect(statSync(file).ino, "a new file took the name").not.toBe(ino);
    expect(readFd(fd), "the open descriptor still reads the old file whole").toEqual(
      Buffer.from(program.subarray(0, 24)),
    );
    closeSync(fd);
    expect(readFileSync(file)).toEqual(Buffer.from(program));
  });

  it("positive control: an in-place write changes what an open descriptor reads", () => {
    const file = join(scratch.root, "in-place.bpf");
    writeFileSync(file, "old bytes, whole");
    const fd = openSync(file, "r");
    writeFileSync(file, "new");
    expect(readFd(fd).toString()).toBe("new");
    closeSync(fd);
  });

  it("writeFileAtomic leaves no temporary file, and gives the file the mode asked", () => {
    const dir = join(scratch.root, "atomic");
    mkdirSync(dir);
    writeFileAtomic(join(dir, "f"), "x", 0o600);
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("x");
    expect(statSync(join(dir, "f")).mode & 0o777).toBe(0o600);
    writeFileAtomic(join(dir, "f"), "y", 0o644);
    expect(readFileSync(join(dir, "f"), "utf8")).toBe("y");
    expect(readdirSync(dir)).toEqual(["f"]);
  });
});

describe("a launch record", () => {
  it("is replaced by a rename when it ends: a reader holding the started record reads it whole", () => {
    const reg = new LaunchRegistry(join(scratch.root, "launches"));
    const rec: LaunchRecord = {
      run: "r1",
      instance: "i1",
      runDir: "/runs/r1",
      pid: 123,
      startedAt: "2026-12-05T00:00:00Z",
      mountStubs: [],
      cgroups: [],
      end: null,
    };
    reg.record(rec);
    const file = join(reg.dir, "r1.json");
    const fd = openSync(file, "r");
    const ino = statSync(file).ino;
    reg.end("r1", "host-lost", "recovered");
    expect(statSync(file).ino).not.toBe(ino);
    expect(JSON.parse(readFd(fd).toString()).end).toBeNull();
    closeSync(fd);
    expect(reg.get("r1")?.end?.reason).toBe("host-lost");
    expect(reg.open()).toEqual([]);
  });
});

describe("per-launch cgroup names", () => {
  it("differ for two runs launched by one host in the same millisecond", () => {
    expect(sessionCgroupName("run-a", 42, 1_700_000_000_000)).not.toBe(
      sessionCgroupName("run-b", 42, 1_700_000_000_000),
    );
    expect(sessionCgroupName("run-a", 42, 1_700_000_000_000)).toMatch(/^run-a-42-/);
  });
});
