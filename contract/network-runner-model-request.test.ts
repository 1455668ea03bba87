// The edges of model-body.ts and model-headers.ts the generated sweep found untested: each
// malformed body's exact answer, tool types that are not strings, nested search_result blocks, and
// the header checks' whole refusals, each in the Messages API's own error types.
import { describe, expect, it } from "vitest";
import { decideModelBody } from "../src/core/network/model-body.ts";
import { betaValues, decideModelHeaders } from "../src/core/network/model-headers.ts";

const body = (over: Record<string, unknown> = {}) => ({
  model: "claude-sonnet-4-5",
  max_tokens: 8,
  messages: [{ role: "user", content: "hi" }],
  ...over,
});
const malformed = (at: string, what: string) => ({
  kind: "refuse",
  status: 400,
  errorType: "invalid_request_error",
  message: `${at}: ${what}`,
});
const refused = (message: string) => ({ kind: "refuse", status: 403, errorType: "permission_error", message });

describe("decideModelBody: what is not a request", () => {
  it("null, a string and a list are no body: 400 invalid_request_error", () => {
    for (const b of [null, "model", []])
      expect(decideModelBody(b, []), JSON.stringify(b)).toEqual(
        malformed("(body)", "a Messages API request is a JSON object"),
      );
  });
  it("a tool or a message that is not an object is named by its place in the list", () => {
    expect(decideModelBody(body({ tools: ["t"] }), [])).toEqual(
      malformed("tools[0]", "a tool definition is an object"),
    );
    expect(decideModelBody(body({ messages: [{ role: "user", content: "a" }, "b"] }), [])).toEqual(
      malformed("messages[1]", "a message is an object"),
    );
  });
});

describe("decideModelBody: tool types that are not strings", () => {
  it("a number, a list or a symbol as a tool type is refused with no grant named, even under a grant", () => {
    expect(decideModelBody(body({ tools: [{ type: 3, name: "t" }] }), ["web-search"])).toEqual(
      refused(
        "tools[0].type: the tool type 3 (a tool the provider runs or defines) is not one the session's proxy passes",
      ),
    );
    // A list whose text is a granted prefix: String() would read it as web_fetch_1, but it is no tool type.
    expect(decideModelBody(body({ tools: [{ type: ["web_fetch_1"], name: "t" }] }), [])).toEqual(
      refused(
        'tools[0].type: the tool type ["web_fetch_1"] (a tool the provider runs or defines) is not one the session\'s proxy passes',
      ),
    );
    // A value JSON cannot spell is shown by String().
    expect(decideModelBody(body({ tools: [{ type: Symbol("x"), name: "t" }] }), [])).toEqual(
      refused(
        "tools[0].type: the tool type Symbol(x) (a tool the provider runs or defines) is not one the session's proxy passes",
      ),
    );
  });
  it("a long tool type is shown cut to its first 120 characters of JSON", () => {
    const type = `web_fetch_${"9".repeat(200)}`;
    expect(decideModelBody(body({ tools: [{ type, name: "t" }] }), [])).toEqual(
      refused(
        `tools[0].type: the tool type ${JSON.stringify(type).slice(0, 120)} (a tool the provider runs or defines) is not one the session's proxy passes (it needs the grant web-fetch)`,
      ),
    );
  });
});

describe("decideModelBody: blocks nested in tool_result and search_result", () => {
  it("a search_result's content is checked like a message's", () => {
    const search = (content: unknown[]) => ({ type: "search_result", source: "notes", title: "n", content });
    expect(
      decideModelBody(body({ messages: [{ role: "user", content: [search([{ type: "text", text: "a" }])] }] }), []),
    ).toEqual({
      kind: "pass",
    });
    expect(
      decideModelBody(body({ messages: [{ role: "user", content: [search([{ type: "server_tool_use" }])] }] }), []),
    ).toEqual(
      refused(
        'messages[0].content[0].content[0].type: the content block "server_tool_use" is not one the session\'s proxy passes (it needs the grant web-search or web-fetch or code-execution)',
      ),
    );
  });
  it("a tool_result without content passes", () => {
    const result = { type: "tool_result", tool_use_id: "toolu_1" };
    expect(decideModelBody(body({ messages: [{ role: "user", content: [result] }] }), [])).toEqual({ kind: "pass" });
  });
});

describe("decideModelHeaders and betaValues", () => {
  it("betaValues drops the empty items of a comma list and empty headers", () => {
    expect(betaValues(["a, ,b", "", " c ,"])).toEqual(["a", "b", "c"]);
  });
  it("a beta off the list: 403 permission_error naming it and the grant that admits it", () => {
    expect(decideModelHeaders({ betas: ["web-fetch-2025-09-10"], contentEncoding: [] }, [])).toEqual(
      refused(
        'anthropic-beta "web-fetch-2025-09-10" is not one the session\'s proxy passes (it needs the grant web-fetch)',
      ),
    );
  });
  it("an encoded body: 415 invalid_request_error naming the encoding", () => {
    expect(decideModelHeaders({ betas: [], contentEncoding: ["identity, GZIP"] }, [])).toEqual({
      kind: "refuse",
      status: 415,
      errorType: "invalid_request_error",
      message: 'content-encoding "gzip": the session\'s proxy reads request bodies as sent, so it passes none encoded',
    });
  });
});
