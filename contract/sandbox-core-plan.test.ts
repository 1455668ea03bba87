// The edges of bpf.ts and probe-plan.ts the generated sweep found untested: the assembler's offsets,
// bytes, listing and refusals on a small program built in the test, and what each probe step adds.
// The seccomp tests build their filter while collecting, so no mutant of the assembler reached them.
import { ETC_FILES } from "../src/core/sandbox/etc.ts";
import { describe, expect, it } from "vitest";
import { NEXT, assemble, encode, listing, type Item } from "../src/core/sandbox/bpf.ts";
import { hostProblem, probeSteps } from "../src/core/sandbox/probe-plan.ts";
import { HOST_LAYOUTS } from "../src/conformance/worlds/host-fixtures.ts";

/** Checks the arch, kills x32, denies with EPERM when bit 4 is set, else allows. */
const PROGRAM: Item[] = [
  { op: "ld", offset: 4, note: "arch" },
  { op: "jeq", k: 0xc000003e, jt: "ok", jf: "kill", note: "x86_64" },
  { label: "ok" },
  { op: "ld", offset: 0, note: "nr" },
  { op: "jge", k: 0x40000000, jt: "kill", jf: NEXT, note: "x32" },
  { op: "jset", k: 0x10, jt: NEXT, jf: "allow", note: "bit 4" },
  { op: "ret", k: 0x50001, note: "eperm" },
  { label: "allow" },
  { op: "ret", k: 0x7fff0000, note: "allow" },
  { label: "kill" },
  { op: "ret", k: 0x80000000, note: "kill" },
];
const filler = (n: number): Item[] => Array.from({ length: n }, () => ({ op: "ret", k: 0, note: "" }) as Item);

describe("the BPF assembler", () => {
  it("resolves labels to forward offsets from the next instruction; ld and ret carry no jumps", () => {
    // Opcodes from linux/filter.h: ld w abs 0x20, jeq k 0x15, jge k 0x35, jset k 0x45, ret k 0x06.
    expect(assemble(PROGRAM).map(({ code, jt, jf, k }) => [code, jt, jf, k])).toEqual([
      [0x20, 0, 0, 4],
      [0x15, 0, 5, 0xc000003e],
      [0x20, 0, 0, 0],
      [0x35, 3, 0, 0x40000000],
      [0x45, 0, 1, 0x10],
      [0x06, 0, 0, 0x50001],
      [0x06, 0, 0, 0x7fff0000],
      [0x06, 0, 0, 0x80000000],
    ]);
  });
  it("encodes struct sock_filter: u16 code, u8 jt, u8 jf, u32 k, little-endian, 8 bytes each", () => {
    expect(Array.from(encode(assemble(PROGRAM)))).toEqual([
      0x20, 0, 0, 0, 4, 0, 0, 0, 0x15, 0, 0, 5, 0x3e, 0, 0, 0xc0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0x35, 0, 3, 0, 0, 0, 0,
      0x40, 0x45, 0, 0, 1, 0x10, 0, 0, 0, 0x06, 0, 0, 0, 1, 0, 5, 0, 0x06, 0, 0, 0, 0, 0, 0xff, 0x7f, 0x06, 0, 0, 0, 0,
      0, 0, 0x80,
    ]);
  });
  it("lists one instruction per line with absolute jump targets", () => {
    expect(listing(assemble(PROGRAM))).toEqual([
      "0000 ld   [4]                                 ; arch",
      "0001 jeq  0xc000003e jt 0002 jf 0007          ; x86_64",
      "0002 ld   [0]                                 ; nr",
      "0003 jge  0x40000000 jt 0007 jf 0004          ; x32",
      "0004 jset 0x00000010 jt 0005 jf 0006          ; bit 4",
      "0005 ret  0x00050001                          ; eperm",
      "0006 ret  0x7fff0000                          ; allow",
      "0007 ret  0x80000000                          ; kill",
    ]);
  });
  it("refuses a label defined twice, a jump to no label, a backward jump and one past 255", () => {
    const twice: Item[] = [{ label: "a" }, { op: "ret", k: 0, note: "" }, { label: "a" }];
    expect(() => assemble(twice)).toThrow("bpf: label a defined twice");
    expect(() => assemble([{ op: "jeq", k: 1, jt: "nowhere", jf: NEXT, note: "" }, ...filler(1)])).toThrow(
      "bpf: jump to undefined label nowhere",
    );
    const back: Item[] = [{ label: "top" }, ...filler(1), { op: "jeq", k: 1, jt: "top", jf: NEXT, note: "" }];
    expect(() => assemble(back)).toThrow("bpf: jump from 1 to top (-2) is out of range");
    const far = (n: number): Item[] => [
      { op: "jeq", k: 1, jt: NEXT, jf: "far", note: "" },
      ...filler(n),
      { label: "far" },
      ...filler(1),
    ];
    expect(assemble(far(255))[0]!.jf, "255 is the longest jump a u8 holds").toBe(255);
    expect(() => assemble(far(256))).toThrow("bpf: jump from 0 to far (256) is out of range");
  });
});

describe("the probe's steps", () => {
  it("each step adds one thing to the last, ending in the runner's command", () => {
    const facts = HOST_LAYOUTS["merged-usr"]!.facts;
    const steps = probeSteps(facts);
    let before: string[] = [];
    const added = steps.map((s) => {
      const end = s.args.indexOf("--");
      const body = s.args.slice(0, end);
      expect(body.slice(0, before.length), `${s.name} keeps every earlier step`).toEqual(before);
      const out = { name: s.name, adds: body.slice(before.length), runs: s.args.slice(end) };
      before = body;
      return out;
    });
    const node = facts.runnerNode;
    const t = ["--", "true"];
    expect(added).toEqual([
      {
        name: "the namespaces (--unshare-user --unshare-pid --unshare-ipc --unshare-net --unshare-uts --unshare-cgroup --as-pid-1)",
        adds: [
          ...["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--unshare-uts", "--unshare-cgroup"],
          ...[
            "--as-pid-1",
            "--ro-bind",
            "/usr",
            "/usr",
            "--symlink",
            "usr/bin",
            "/bin",
            "--symlink",
            "usr/lib",
            "/lib",
          ],
          ...["--symlink", "usr/lib64", "/lib64", "--symlink", "usr/sbin", "/sbin"],
          ...ETC_FILES.flatMap((e) => ["--ro-bind-try", e.path, e.path]),
          ...["--dev", "/dev", "--perms", "1777", "--size", "67108864", "--tmpfs", "/dev/shm", "--proc", "/proc"],
          ...["--ro-bind", "/proc/sys", "/proc/sys"],
        ],
        runs: t,
      },
      { name: "--cap-drop ALL", adds: ["--cap-drop", "ALL"], runs: t },
      { name: "--disable-userns", adds: ["--disable-userns"], runs: t },
      { name: "--assert-userns-disabled", adds: ["--assert-userns-disabled"], runs: t },
      { name: "--new-session", adds: ["--new-session"], runs: t },
      { name: "--seccomp 3", adds: ["--seccomp", "3"], runs: t },
      { name: "a tmpfs with --size", adds: ["--perms", "1777", "--size", "268435456", "--tmpfs", "/tmp"], runs: t },
      {
        name: `the runner's command (setpriv --pdeathsig, prlimit --nproc --data, the execute-only node ${node})`,
        adds: ["--ro-bind", node, node],
        runs: [
          "--",
          "setpriv",
          "--pdeathsig",
          "KILL",
          "--",
          "prlimit",
          "--nproc=512",
          "--data=2147483648",
          "--",
          node,
          "-e",
          "0",
        ],
      },
    ]);
  });
  it("a root host with both a pids and a memory cgroup has no problem before bwrap", () => {
    const facts = HOST_LAYOUTS["merged-usr"]!.facts;
    const base = { dir: "/sys/fs/cgroup/m", version: 2 } as const;
    expect(hostProblem({ ...facts, uid: 0, cgroups: { pids: base, memory: base } })).toBe(null);
  });
});
