// The pull-request review's shell: GitHub's REST API and git, nothing clever. With
// MOSAIC_GITHUB_RECORDED=<dir> every GET is answered from <dir>/<path>.json (the path's slashes
// and query as dashes, ${HEAD_SHA} and ${BASE_SHA} in it replaced from the environment) and every
// write is appended to <dir>/posted.jsonl instead: the contract tests and .ci/run rehearse the
// workflow's steps so, with no network and no token.
import { appendFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export class GithubError extends Error {}

export type Api = {
  get: (path: string) => Promise<unknown>;
  /** Every page of a list (100 a page, up to `max` pages). */
  list: (path: string, max?: number) => Promise<unknown[]>;
  send: (method: "POST" | "PATCH", path: string, body: unknown) => Promise<unknown>;
};

const recordedName = (path: string) => path.replace(/^\//, "").replace(/[/?&=]/g, "-") + ".json";

function recordedApi(dir: string, env: NodeJS.ProcessEnv): Api {
  const get = async (path: string) => {
    const file = join(dir, recordedName(path));
    if (!existsSync(file)) throw new GithubError(`recorded: no ${file} for GET ${path}`);
    const text = readFileSync(file, "utf8")
      .replaceAll("${HEAD_SHA}", env.REVIEW_HEAD_SHA ?? "")
      .replaceAll("${BASE_SHA}", env.REVIEW_BASE_SHA ?? "");
    return JSON.parse(text) as unknown;
  };
  return {
    get,
    list: async (path) => {
      const v = await get(path);
      return Array.isArray(v) ? v : [];
    },
    send: async (method, path, body) => {
      mkdirSync(dir, { recursive: true });
      appendFileSync(join(dir, "posted.jsonl"), JSON.stringify({ method, path, body }) + "\n");
      return { id: 1 };
    },
  };
}

function liveApi(token: string, base: string): Api {
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: {
        accept: "application/vnd.github+json",
        authorization: `Bearer ${token}`,
        "x-github-api-version": "2022-11-28",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!r.ok) throw new GithubError(`${method} ${path}: HTTP ${r.status}: ${(await r.text()).slice(0, 300)}`);
    return (await r.json()) as unknown;
  };
  return {
    get: (path) => call("GET", path),
    list: async (path, max = 20) => {
      const out: unknown[] = [];
      for (let page = 1; page <= max; page++) {
        const v = await call("GET", `${path}${path.includes("?") ? "&" : "?"}per_page=100&page=${page}`);
        if (!Array.isArray(v)) break;
        out.push(...v);
        if (v.length < 100) break;
      }
      return out;
    },
    send: (method, path, body) => call(method, path, body),
  };
}

/** The API this environment gives: recorded, or GitHub's with GITHUB_TOKEN. */
export function apiFrom(env: NodeJS.ProcessEnv): Api {
  if (env.MOSAIC_GITHUB_RECORDED) return recordedApi(env.MOSAIC_GITHUB_RECORDED, env);
  if (!env.GITHUB_TOKEN) throw new GithubError("GITHUB_TOKEN is not set (or set MOSAIC_GITHUB_RECORDED to rehearse)");
  return liveApi(env.GITHUB_TOKEN, env.GITHUB_API_URL ?? "https://api.github.com");
}

/** A variable the workflow passes through `env:`; a GithubError naming it when it is missing. */
export function need(env: NodeJS.ProcessEnv, name: string): string {
  const v = env[name];
  if (v === undefined || v === "") throw new GithubError(`${name} is not set`);
  return v;
}
