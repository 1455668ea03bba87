// Approvals a pull request cannot forge, on a real git repository and GitHub's REST payloads as
// recorded (contract/fixtures/github/): the author approving their own weakening, a reviewer who
// is no code owner, a code owner made one by the pull request's own CODEOWNERS, an approval of an
// earlier head, an approval that names no finding, one withdrawn by a later request for changes,
// and a row in golden-approvals.json. Each fails; a code owner's approval of the head naming the
// finding passes, and the report says who approved it and why. Then the workflow's three steps
// run end to end against the recorded API.
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "../src/conformance/golden/golden.ts";
import { makeScratch } from "../src/conformance/worlds/scratch.ts";
import { checkApprovals, readApprovalLines, type ReviewPayload } from "../src/review/approvals.ts";
import { ownersOf, parseCodeowners, patternToRegex, unguardedPaths } from "../src/review/codeowners.ts";
import { isProofInput } from "../src/review/proof-inputs.ts";
import { planComment, selectPulls } from "../src/review/github.ts";
import { PR_DIR, fetchStep, postStep, reviewStep } from "../src/review/pr-steps.ts";
import { commit, git, makeRepo, review } from "./support/review-repo.ts";

const FIXTURES = join(REPO_ROOT, "contract/fixtures/github");
const scratch = makeScratch("review-approvals");
afterAll(() => scratch.remove());

const H = " · regenerate: npm run goldens:update";
const BINDS = `# bind table: fixture${H}\nsource | inside | mode | why\n<run> | <run> | rw | the run\n<run>/bundle | <run>/bundle | ro | stays as written\n`;
// The author is a code owner too: only the author rule refuses their approval.
const OWNERS = "# who approves a change to what a verdict rests on\n* @nobody\n/goldens/ @owner @alice\n";

type Shas = { base: string; old: string; head: string; id: string };

/** main: the goldens and CODEOWNERS; topic: the weakening (old), then one more push (head). */
function makePr(name: string, extra: Record<string, string | null> = {}): { dir: string } & Shas {
  const dir = join(scratch.root, name);
  const base = makeRepo(dir, { "goldens/sandbox/binds/a.txt": BINDS, ".github/CODEOWNERS": OWNERS });
  const old = commit(dir, { "goldens/sandbox/binds/a.txt": BINDS.replace("bundle | ro", "bundle | rw") });
  const head = commit(dir, { "docs/why.md": "the bundle is rebuilt each run\n", ...extra });
  const json = JSON.parse(review(dir, "--base", "main", "--head", head, "--json").out) as {
    needsApproval: { id: string }[];
  };
  return { dir, base, old, head, id: json.needsApproval[0]!.id };
}

const fill = (text: string, s: Shas) =>
  text
    .replaceAll("${HEAD_SHA}", s.head)
    .replaceAll("${BASE_SHA}", s.base)
    .replaceAll("${OLD_SHA}", s.old)
    .replaceAll("${ID}", s.id);
const fixture = (name: string, s: Shas): unknown => JSON.parse(fill(readFileSync(join(FIXTURES, name), "utf8"), s));

/** The recorded pull request #7 and the reviews with these ids, as review:fetch would write them. */
function github(pr: { dir: string } & Shas, reviewIds: number[]): string {
  const dir = join(pr.dir, `.github-${reviewIds.join("-") || "none"}`);
  mkdirSync(dir, { recursive: true });
  const pull = (fixture("pulls.json", pr) as { number: number }[]).find((p) => p.number === 7);
  const reviews = (fixture("reviews.json", pr) as ReviewPayload[]).filter((r) => reviewIds.includes(r.id!));
  writeFileSync(join(dir, "pull.json"), JSON.stringify(pull));
  writeFileSync(join(dir, "reviews.json"), JSON.stringify(reviews));
  return dir;
}

const verdict = (pr: { dir: string } & Shas, reviewIds: number[]) =>
  review(pr.dir, "--base", pr.base, "--head", pr.head, "--github", github(pr, reviewIds));

describe("approvals a pull request cannot forge", () => {
  let pr: { dir: string } & Shas;
  beforeAll(() => {
    // The forged row of the old approvals file rides along in the head: it must approve nothing.
    pr = makePr("forgeries", {
      "golden-approvals.json": JSON.stringify([
        { golden: "goldens/sandbox/binds/a.txt", case: "*", approvedBy: "security-team", why: "ok" },
      ]),
    });
  });

  it("control: a code owner, not the author, approves the head naming the finding: exit 0, with who and why", () => {
    const r = verdict(pr, [805]);
    expect(r.err).toBe("");
    expect(r.out).toContain("approvals: 1 approved · 0 unapproved");
    expect(r.out).toContain(
      `${pr.id} · goldens/sandbox/binds/a.txt · bind <run>/bundle: mode · mount-widened · @Owner: "the bundle is rebuilt for each run, so writing it reaches nothing later"`,
    );
    expect(r.code).toBe(0);
  });

  it("no review: the row in golden-approvals.json approves nothing", () => {
    const r = verdict(pr, []);
    expect(r.out).toContain("approvals: 0 approved · 1 unapproved");
    expect(r.code).toBe(1);
  });

  it.each([
    [801, "the author approving their own weakening", "@alice wrote the pull request"],
    [802, "a reviewer who is no code owner", "@bob is not a code owner of it (@owner @alice)"],
    [803, "a code owner's approval of an earlier head", "@owner approved "],
    [807, "a code owner's comment that is no approval", "@owner's review is COMMENTED, not an approval"],
  ])("review %i, %s: exit 1, the refusal named", (id, _what, why) => {
    const r = verdict(pr, [id]);
    expect(r.out).toContain("approvals: 0 approved · 1 unapproved");
    expect(r.out).toContain(`not counted: ${why}`);
    expect(r.code).toBe(1);
  });

  it("a code owner's approval of the head that names no finding approves nothing", () => {
    expect(verdict(pr, [804]).code).toBe(1);
  });

  it("a code owner's approval of the head that names another finding approves nothing here", () => {
    const dir = github(pr, [805]);
    const reviews = JSON.parse(readFileSync(join(dir, "reviews.json"), "utf8")) as ReviewPayload[];
    const other = pr.id.replace(/^./, (c) => (c === "0" ? "1" : "0"));
    const body = `approve ${other}: the bundle is rebuilt for each run\n`;
    writeFileSync(join(dir, "reviews.json"), JSON.stringify(reviews.map((r) => ({ ...r, body }))));
    const r = review(pr.dir, "--base", pr.base, "--head", pr.head, "--github", dir);
    expect(r.out).toContain("approvals: 0 approved · 1 unapproved");
    expect(r.code).toBe(1);
  });

  it("a later request for changes by the same code owner withdraws the approval", () => {
    expect(verdict(pr, [805]).code, "control").toBe(0);
    expect(verdict(pr, [805, 806]).code).toBe(1);
  });

  it("a pull request that makes its reviewer a code owner in its own CODEOWNERS: the base's file decides", () => {
    const forged = makePr("codeowners", { ".github/CODEOWNERS": `${OWNERS}/goldens/ @bob\n` });
    const r = verdict(forged, [802]);
    expect(r.out).toContain("not counted: @bob is not a code owner of it (@owner @alice)");
    expect(r.code).toBe(1);
  });

  it("an approval of one pull request approves nothing in the next that makes the same change", () => {
    const first = makePr("first");
    expect(verdict(first, [805]).code, "approved in its own pull request").toBe(0);
    const again = makePr("again");
    expect(again.id, "the same change, the same finding id").toBe(first.id);
    expect(verdict(again, []).code, "no review of this pull request").toBe(1);
  });

  it("payloads of another head, or none, exit 2", () => {
    const dir = github(pr, [805]);
    writeFileSync(
      join(dir, "pull.json"),
      JSON.stringify({
        ...(JSON.parse(readFileSync(join(dir, "pull.json"), "utf8")) as object),
        head: { sha: pr.old },
      }),
    );
    const r = review(pr.dir, "--base", pr.base, "--head", pr.head, "--github", dir);
    expect(r.err).toContain("is not the commit reviewed");
    expect(r.code).toBe(2);
    expect(review(pr.dir, "--base", pr.base, "--github", join(pr.dir, "nowhere")).code).toBe(2);
  });
});

describe("the approval rules over recorded payloads", () => {
  it("reads `approve <id>: <why>` lines only, each with its why", () => {
    expect([
      ...readApprovalLines(
        "Looks good.\n- approve `0123456789abcdef`: safe here\napprove fedcba9876543210:\nAPPROVE 1111111111111111: ok",
      ),
    ]).toEqual([
      ["0123456789abcdef", "safe here"],
      ["1111111111111111", "ok"],
    ]);
  });

  it("CODEOWNERS: the last matching rule names the owners, as GitHub documents its patterns", () => {
    const co = parseCodeowners(
      "*  @all\n*.js @js\n/build/logs/ @logs\ndocs/* @docs\napps/ @apps\n/goldens/ @owner # goldens\n",
    );
    expect(co.problems).toEqual([]);
    expect(ownersOf(co, "src/a.ts")).toEqual(["@all"]);
    expect(ownersOf(co, "src/a.js")).toEqual(["@js"]);
    expect(ownersOf(co, "build/logs/x/y.txt")).toEqual(["@logs"]);
    expect(ownersOf(co, "docs/getting-started.md")).toEqual(["@docs"]);
    expect(ownersOf(co, "docs/build-app/troubleshooting.md"), "docs/* is one level").toEqual(["@all"]);
    expect(ownersOf(co, "x/apps/y.txt"), "apps/ anywhere").toEqual(["@apps"]);
    expect(ownersOf(co, "goldens/sandbox/binds/a.txt")).toEqual(["@owner"]);
    expect(patternToRegex("/goldens/").test("other/goldens/a")).toBe(false);
  });

  it("a team as owner approves nothing: its members cannot be read with the workflow's token", () => {
    const co = parseCodeowners("* @acme/security\n");
    const f = { verdict: "weakens" as const, file: "a", case: "c", before: "", after: "", rule: "r", why: "w" };
    const pull = { number: 1, user: { login: "alice" }, head: { sha: "h" }, base: { sha: "b" } };
    const [c] = checkApprovals(
      [f],
      pull,
      [{ user: { login: "security" }, state: "APPROVED", commit_id: "h", body: `approve ${"0".repeat(16)}: x` }],
      co,
    );
    expect(c!.state).toBe("unapproved");
  });

  it("the run's pull request is the open one with its head; the comment updated is the workflow's own", () => {
    const s = { base: "b", old: "o", head: "h", id: "i" };
    expect(selectPulls(fixture("pulls.json", s), "h").map((p) => p.number)).toEqual([7]);
    expect(selectPulls(fixture("pulls.json", s), "nothing")).toEqual([]);
    expect(planComment(fixture("comments.json", s)), "not the contributor's comment with the same marker").toEqual({
      kind: "update",
      id: 9002,
    });
    expect(planComment([])).toEqual({ kind: "create" });
  });
});

describe("the pull-request review job's steps against the recorded API", () => {
  /** review:fetch, review:pr and review:post in the repository, with the recorded API in `api`. */
  async function runJob(pr: { dir: string } & Shas, reviewIds: number[], runHead = pr.head) {
    const api = join(pr.dir, `.api-${reviewIds.join("-") || "none"}`);
    mkdirSync(api, { recursive: true });
    const put = (name: string, v: unknown) => writeFileSync(join(api, name), JSON.stringify(v));
    put("repos-acme-mosaic-harness-pulls-state-open.json", fixture("pulls.json", pr));
    put(
      "repos-acme-mosaic-harness-pulls-7-reviews.json",
      (fixture("reviews.json", pr) as ReviewPayload[]).filter((r) => reviewIds.includes(r.id!)),
    );
    put("repos-acme-mosaic-harness-issues-7-comments.json", fixture("comments.json", pr));
    const env = { MOSAIC_GITHUB_RECORDED: api, GITHUB_REPOSITORY: "acme/mosaic-harness", REVIEW_HEAD_SHA: runHead };
    const log: string[] = [];
    const codes = [
      await fetchStep(pr.dir, env, (s) => log.push(s)),
      reviewStep(pr.dir, env, (s) => log.push(s)),
      await postStep(pr.dir, env, (s) => log.push(s)),
    ];
    const file = join(api, "posted.jsonl");
    const lines = existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : [];
    const posted = lines.map((l) => JSON.parse(l) as { method: string; path: string; body: Record<string, string> });
    return { codes, posted, log };
  }

  it("approved by a code owner: the comment is updated in place, the status is success, the job passes", async () => {
    const pr = makePr("job-approved");
    const { codes, posted } = await runJob(pr, [805]);
    expect(codes).toEqual([0, 0, 0]);
    expect(posted.map((p) => `${p.method} ${p.path}`)).toEqual([
      "PATCH /repos/acme/mosaic-harness/issues/comments/9002",
      `POST /repos/acme/mosaic-harness/statuses/${pr.head}`,
    ]);
    expect(posted[0]!.body.body).toContain("@Owner:");
    expect(posted[1]!.body).toMatchObject({ state: "success", context: "proof review" });
    expect(existsSync(join(pr.dir, PR_DIR, "report.md"))).toBe(true);
    expect(git(pr.dir, "status", "--porcelain", "--untracked-files=no"), "the job writes no tracked file").toBe("");
  });

  it("approved by its author only: the status is failure and the job fails", async () => {
    const pr = makePr("job-author");
    const { codes, posted } = await runJob(pr, [801]);
    expect(codes).toEqual([0, 0, 1]);
    expect(posted[1]!.body).toMatchObject({ state: "failure", context: "proof review" });
  });

  it("a run whose head no open pull request has: nothing to review, nothing posted", async () => {
    const pr = makePr("job-none");
    const { codes, log, posted } = await runJob(pr, [805], pr.old);
    expect(codes).toEqual([0, 0, 0]);
    expect(posted).toEqual([]);
    expect(log.join("\n")).toContain("no open pull request has the head");
  });
});

describe("the repository's CODEOWNERS guards every file a verdict rests on", () => {
  const text = readFileSync(join(REPO_ROOT, ".github/CODEOWNERS"), "utf8");
  // A walk, not git ls-files: the mutation runner's tree copies have no .git.
  const inputs = readdirSync(REPO_ROOT)
    .filter((top) => !/^(node_modules|\.git|\.scratch|reports|\.stryker-tmp)$/.test(top))
    .flatMap((top) =>
      statSync(join(REPO_ROOT, top)).isDirectory()
        ? readdirSync(join(REPO_ROOT, top), { recursive: true, encoding: "utf8" }).map((p) => `${top}/${p}`)
        : [top],
    )
    .filter((p) => statSync(join(REPO_ROOT, p)).isFile() && isProofInput(p));

  it("each tracked proof input (goldens, mutants, tests, their helpers and configs, the engine, package files, CI) has a user owner by a rule of its own", () => {
    const co = parseCodeowners(text);
    expect(co.problems).toEqual([]);
    expect(inputs.length, "the inputs are read off the tree").toBeGreaterThan(1000);
    for (const p of [
      "goldens/sandbox/binds/claude-outside-usr.claude-pm.txt",
      "mutants/gate.json",
      "src/review/rules.ts",
      "tsconfig.json",
      ".ci/run",
    ])
      expect(inputs, p).toContain(p);
    expect(unguardedPaths(co, inputs)).toEqual([]);
  });

  it("control: with one rule taken out, its files are owned by the catch-all alone and listed; a team or nobody is listed too", () => {
    const without = text.replace(/^\/src\/review\/ .*$/m, "");
    expect(without).not.toBe(text);
    const left = unguardedPaths(parseCodeowners(without), inputs);
    expect(left.length).toBeGreaterThan(0);
    expect(left.every((l) => l.path.startsWith("src/review/") && /only the catch-all \*/.test(l.why))).toBe(true);
    expect(unguardedPaths(parseCodeowners("/src/ @acme/security\n"), ["src/a.ts", "b.ts"])).toEqual([
      { path: "src/a.ts", why: "line 1 names no user" },
      { path: "b.ts", why: "no rule matches it" },
    ]);
  });
});
