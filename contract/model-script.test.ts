import { http } from "msw";
import { describe, expect, it } from "vitest";
import { MosaicError } from "../src/core/errors.ts";
import { matchGolden } from "../src/conformance/golden/golden-expect.ts";
import {
  fillTemplateVars,
  loadModelScript,
  type ModelScript,
  type Reply,
} from "../src/conformance/stand-ins/model-script/format.ts";
import { handlersFor, remainingTurns, respond } from "../src/conformance/stand-ins/model-script/handlers.ts";
import { ScriptRecorder, type ScriptFailure } from "../src/conformance/stand-ins/model-script/record.ts";
import { latestToolResults, NO_TOOL_RESULT, toolResultsIn } from "../src/conformance/stand-ins/model-script/resolve.ts";
import { sseEvents } from "../src/conformance/stand-ins/model-script/sse.ts";

// The script format and its msw handlers, in process through getResponse: no port.
const SOURCE = "contract/model-script.test.ts";
const BASE = "http://scripted.invalid";
const load = (turns: unknown[]) => loadModelScript({ turns }, { source: SOURCE });

function attempt(
  doc: unknown,
  f: (doc: unknown) => unknown = (d) => loadModelScript(d, { source: SOURCE }),
): MosaicError {
  try {
    f(doc);
  } catch (e) {
    if (e instanceof MosaicError) return e;
    throw e;
  }
  return expect.unreachable("a malformed script was accepted");
}

const call = (body: unknown, headers: Record<string, string> = {}) =>
  new Request(`${BASE}/v1/messages?beta=true`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });

const FIRST = { model: "m", messages: [{ role: "user", content: "do the task" }] };
/** A request whose last message carries these tool results, after an earlier one that carried `earlier`. */
function withResults(results: Array<string | Array<{ type: "text"; text: string }>>, earlier: string[] = []) {
  const res = (texts: typeof results, from: number) =>
    texts.map((t, i) => ({ type: "tool_result", tool_use_id: `toolu_${from + i}`, content: t }));
  const messages: unknown[] = [{ role: "user", content: "do the task" }];
  if (earlier.length > 0)
    messages.push(
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_0", name: "Read", input: {} }] },
      { role: "user", content: res(earlier, 100) },
    );
  messages.push(
    {
      role: "assistant",
      content: results.map((_, i) => ({ type: "tool_use", id: `toolu_${i}`, name: "Read", input: {} })),
    },
    { role: "user", content: res(results, 0) },
  );
  return { model: "m", messages };
}

function model(script: ModelScript) {
  const failures: ScriptFailure[] = [];
  const recorder = new ScriptRecorder({ onFailure: (f) => failures.push(f) });
  const handlers = handlersFor(script, recorder);
  return { recorder, handlers, failures, send: (req: Request) => respond(handlers, req, recorder) };
}

type Parsed = { event: string; data: Record<string, any> };
/** Reads an SSE body back into events, checking each block is exactly an `event:` line and a `data:` line. */
function parseSse(text: string): Parsed[] {
  expect(text.endsWith("\n\n"), "the body ends with a blank line").toBe(true);
  return text
    .slice(0, -2)
    .split("\n\n")
    .map((block) => {
      const lines = block.split("\n");
      expect(lines.length, `one event line and one data line: ${block}`).toBe(2);
      expect(lines[0]).toMatch(/^event: [a-z_]+$/);
      expect(lines[1]).toMatch(/^data: \{/);
      const event = lines[0]!.slice("event: ".length);
      const data = JSON.parse(lines[1]!.slice("data: ".length));
      expect(data.type, "the event line names the data's type").toBe(event);
      return { event, data };
    });
}

/** The properties both CLIs depend on (DESIGN.md, "Driving the real CLIs"), asserted beside each golden. */
function expectCliShape(events: Parsed[], stop: "tool_use" | "end_turn") {
  expect(events.map((e) => e.event)).toEqual([
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  const [start, blockStart, delta, , messageDelta] = events as [Parsed, Parsed, Parsed, Parsed, Parsed];
  expect(start.data.message.usage, "usage in message_start: Pi fails without it").toMatchObject({
    input_tokens: expect.any(Number),
    output_tokens: expect.any(Number),
  });
  expect(messageDelta.data.usage.output_tokens, "usage.output_tokens in message_delta").toEqual(expect.any(Number));
  expect(messageDelta.data.delta.stop_reason).toBe(stop);
  if (stop === "tool_use") {
    expect(blockStart.data.content_block).toMatchObject({
      type: "tool_use",
      id: expect.stringMatching(/^toolu_/),
      name: expect.any(String),
      input: {},
    });
    expect(delta.data.delta.type).toBe("input_json_delta");
  } else {
    expect(blockStart.data.content_block).toEqual({ type: "text", text: "" });
    expect(delta.data.delta.type).toBe("text_delta");
  }
}

describe("loadModelScript: valid scripts", () => {
  it("each reply kind loads as written", () => {
    const turns: Reply[] = [
      { tool_use: { name: "mcp__mosaic__read_task", input: { task: "t1", nested: { list: [1, "{{workspace}}"] } } } },
      { text: "done" },
      { text_from_tool_results: { template: "saw: {{last_tool_result}} / {{tool_results}}" } },
      {
        when_tool_result_contains: "denied",
        then: { text: "blocked" },
        else: {
          when_tool_result_contains: "ok",
          then: { tool_use: { name: "Read", input: {} } },
          else: { text: "neither" },
        },
      },
    ];
    const script = load(turns);
    expect(script.turns).toEqual(turns);
    expect(script.source).toBe(SOURCE);
  });
});

/** Each malformed script, the field its error must name, and the code. */
const BAD: ReadonlyArray<[name: string, doc: unknown, field: string, code: string]> = [
  ["a list instead of {turns}", [{ text: "a" }], "(document)", "bad-script"],
  ["no turns", {}, "turns", "missing-field"],
  ["an empty script", { turns: [] }, "turns", "bad-script"],
  ["a key beside turns", { turns: [{ text: "a" }], replies: [] }, "replies", "bad-script"],
  ["a turn that is a string", { turns: [{ text: "a" }, "hello"] }, "turns[1]", "bad-script"],
  ["a turn with no kind", { turns: [{ toolUse: { name: "Read", input: {} } }] }, "turns[0]", "bad-script"],
  [
    "a turn with two kinds",
    { turns: [{ text: "a", tool_use: { name: "Read", input: {} } }] },
    "turns[0]",
    "bad-script",
  ],
  [
    "a tool input that is a string",
    { turns: [{ text: "a" }, { text: "b" }, { tool_use: { name: "Read", input: "/etc/passwd" } }] },
    "turns[2].tool_use.input",
    "bad-script",
  ],
  [
    "a tool input that is a list",
    { turns: [{ tool_use: { name: "Read", input: ["/etc/passwd"] } }] },
    "turns[0].tool_use.input",
    "bad-script",
  ],
  ["a tool with no input", { turns: [{ tool_use: { name: "Read" } }] }, "turns[0].tool_use.input", "missing-field"],
  [
    "a tool name with a space",
    { turns: [{ tool_use: { name: "Read file", input: {} } }] },
    "turns[0].tool_use.name",
    "bad-script",
  ],
  [
    "a misspelt tool_use field",
    { turns: [{ tool_use: { name: "Read", inputs: {} } }] },
    "turns[0].tool_use.inputs",
    "bad-script",
  ],
  ["empty text", { turns: [{ text: "" }] }, "turns[0].text", "bad-script"],
  ["text that is a number", { turns: [{ text: 7 }] }, "turns[0].text", "bad-script"],
  ["a key beside text", { turns: [{ text: "a", stop: "end_turn" }] }, "turns[0].stop", "bad-script"],
  [
    "a template with no template",
    { turns: [{ text_from_tool_results: {} }] },
    "turns[0].text_from_tool_results.template",
    "missing-field",
  ],
  [
    "a branch with no else",
    { turns: [{ text: "a" }, { when_tool_result_contains: "x", then: { text: "y" } }] },
    "turns[1].else",
    "missing-field",
  ],
  [
    "a branch on the empty string",
    { turns: [{ when_tool_result_contains: "", then: { text: "y" }, else: { text: "n" } }] },
    "turns[0].when_tool_result_contains",
    "bad-script",
  ],
  [
    "a malformed reply inside a branch",
    {
      turns: [{ when_tool_result_contains: "x", then: { tool_use: { name: "Read", input: 3 } }, else: { text: "n" } }],
    },
    "turns[0].then.tool_use.input",
    "bad-script",
  ],
  [
    "a template variable with spaces",
    { turns: [{ tool_use: { name: "Read", input: { file_path: "{{ workspace }}/a" } } }] },
    "turns[0].tool_use.input.file_path",
    "bad-template-var",
  ],
  [
    "an unclosed template variable",
    { turns: [{ tool_use: { name: "Read", input: { paths: ["ok", "{{workspace/a"] } } }] },
    "turns[0].tool_use.input.paths[1]",
    "bad-template-var",
  ],
  [
    "a request template variable outside a template",
    { turns: [{ text: "saw {{last_tool_result}}" }] },
    "turns[0].text",
    "bad-template-var",
  ],
];

describe("loadModelScript: a malformed script is an error at load time naming the turn", () => {
  it.each(BAD)("%s", (_name, doc, field, code) => {
    const e = attempt(doc);
    expect({ code: e.code, field: e.field }).toEqual({ code, field });
    expect(e.message.startsWith(`${field}: `)).toBe(true);
    expect(e.message, "the error names the script's source").toContain(SOURCE);
  });

  it("golden: every error's code and message", async () => {
    const lines = BAD.map(([name, doc]) => {
      const e = attempt(doc);
      return `${name} → ${e.code}: ${e.message}`;
    });
    await matchGolden(
      "model-script",
      "load-errors",
      "txt",
      "malformed model scripts and the error each gets",
      lines.join("\n"),
    );
  });
});

describe("fillTemplateVars: the run's values, from an explicit map", () => {
  const script = load([
    {
      tool_use: {
        name: "Read",
        input: { file_path: "{{workspace}}/a.txt", also: ["{{home}}/.ssh/id_ed25519", 3, true] },
      },
    },
    {
      when_tool_result_contains: "{{secret_value}}",
      then: { text: "leaked from {{secret_path}}" },
      else: { text_from_tool_results: { template: "{{run}}: {{last_tool_result}}" } },
    },
  ]);
  const values = {
    workspace: "/srv/ws",
    home: "/srv/run/home",
    run: "/srv/run",
    secret_path: "/home/founder/.ssh/id",
    secret_value: "stand-in-secret",
  };

  it("fills every string, nested ones too, and leaves request template variables in templates", () => {
    const filled = fillTemplateVars(script, values);
    expect(filled.turns).toEqual([
      {
        tool_use: {
          name: "Read",
          input: { file_path: "/srv/ws/a.txt", also: ["/srv/run/home/.ssh/id_ed25519", 3, true] },
        },
      },
      {
        when_tool_result_contains: "stand-in-secret",
        then: { text: "leaked from /home/founder/.ssh/id" },
        else: { text_from_tool_results: { template: "/srv/run: {{last_tool_result}}" } },
      },
    ]);
    expect(JSON.stringify(script.turns), "pure: the script given is unchanged").toContain("{{workspace}}");
  });

  it("an unknown template variable is an error naming it and its field", () => {
    const { workspace: _w, ...lacking } = values;
    const e = attempt(script, (s) => fillTemplateVars(s as ModelScript, lacking));
    expect({ code: e.code, field: e.field }).toEqual({
      code: "unknown-template-var",
      field: "turns[0].tool_use.input.file_path",
    });
    expect(e.message).toContain("{{workspace}}");
    expect(e.message, "the error lists what the run does fill").toContain("home, run, secret_path, secret_value");
  });

  it("a run may not set a request template variable", () => {
    const e = attempt(script, (s) => fillTemplateVars(s as ModelScript, { ...values, last_tool_result: "forged" }));
    expect(e.code).toBe("bad-template-var");
    expect(e.message).toContain("{{last_tool_result}}");
  });

  it("handlersFor refuses a script with a template variable left unfilled, naming the field", () => {
    const e = attempt(script, (s) => handlersFor(s as ModelScript, new ScriptRecorder()));
    expect({ code: e.code, field: e.field }).toEqual({
      code: "unfilled-template-var",
      field: "turns[0].tool_use.input.file_path",
    });
    expect(
      () => handlersFor(fillTemplateVars(script, values), new ScriptRecorder()),
      "positive control: filled, it serves",
    ).not.toThrow();
  });
});

describe("the SSE body of each reply kind, as served in process", () => {
  const cases: ReadonlyArray<
    [name: string, reply: Reply, body: unknown, stop: "tool_use" | "end_turn", check: (events: Parsed[]) => void]
  > = [
    [
      "tool-use",
      { tool_use: { name: "Read", input: { file_path: "/srv/ws/a.txt" } } },
      FIRST,
      "tool_use",
      (ev) => expect(JSON.parse(ev[2]!.data.delta.partial_json)).toEqual({ file_path: "/srv/ws/a.txt" }),
    ],
    ["text", { text: "all done" }, FIRST, "end_turn", (ev) => expect(ev[2]!.data.delta.text).toBe("all done")],
    [
      "text-from-tool-results",
      { text_from_tool_results: { template: "saw: {{last_tool_result}}" } },
      withResults(["first", "file body 42"]),
      "end_turn",
      (ev) => expect(ev[2]!.data.delta.text).toBe("saw: file body 42"),
    ],
    [
      "branch",
      { when_tool_result_contains: "denied", then: { text: "was blocked" }, else: { text: "went through" } },
      withResults(["mosaic gate: denied"]),
      "end_turn",
      (ev) => expect(ev[2]!.data.delta.text).toBe("was blocked"),
    ],
  ];
  it.each(cases)("%s", async (name, reply, body, stop, check) => {
    const m = model(load([reply]));
    const res = await m.send(call(body));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const text = await res.text();
    const events = parseSse(text);
    expectCliShape(events, stop);
    check(events);
    await matchGolden("model-script", `sse-${name}`, "txt", `the SSE body served for a ${name} reply`, text);
  });

  it("sseEvents is pure: the same reply and sequence number give the same events", () => {
    expect(sseEvents({ text: "a" }, 3)).toEqual(sseEvents({ text: "a" }, 3));
    expect(sseEvents({ tool_use: { name: "Read", input: {} } }, 3)[1]!.data).toMatchObject({
      content_block: { id: "toolu_scripted_3" },
    });
  });
});

describe("handlers in process, through getResponse", () => {
  it("serves the turns in order, each once, and the call past the last is a recorded failure answered at once", async () => {
    const m = model(
      load([
        { tool_use: { name: "Read", input: { file_path: "a" } } },
        { tool_use: { name: "Read", input: { file_path: "b" } } },
        { text: "end" },
      ]),
    );
    const got: string[] = [];
    for (let i = 0; i < 3; i++) {
      expect(remainingTurns(m.handlers)).toBe(3 - i);
      const delta = parseSse(await (await m.send(call(FIRST))).text())[2]!.data.delta;
      got.push(delta.partial_json ?? delta.text);
    }
    expect(got).toEqual(['{"file_path":"a"}', '{"file_path":"b"}', "end"]);
    expect(remainingTurns(m.handlers)).toBe(0);
    expect(m.failures).toEqual([]);

    const over = await m.send(call(FIRST));
    expect(over.status).toBe(500);
    expect(over.headers.get("x-should-retry"), "the CLI must not retry: a retry would hang or take a later turn").toBe(
      "false",
    );
    const err = await over.json();
    expect(err).toMatchObject({
      type: "error",
      error: { type: "api_error", message: expect.stringContaining("no turn left") },
    });
    expect(m.recorder.requests().map((r) => [r.seq, r.served.kind, r.status])).toEqual([
      [1, "turn", 200],
      [2, "turn", 200],
      [3, "turn", 200],
      [4, "unmatched", 500],
    ]);
    expect(m.recorder.failures()).toEqual([
      {
        kind: "unmatched",
        seq: 4,
        method: "POST",
        url: "/v1/messages?beta=true",
        message: `no turn left for POST /v1/messages: ${SOURCE} has 3 turns, all served`,
      },
    ]);
    expect(m.failures, "onFailure heard it as it happened").toEqual(m.recorder.failures());
  });

  it("answers HEAD / (Claude Code's check), and anything else is a recorded failure", async () => {
    const m = model(load([{ text: "a" }]));
    expect((await m.send(new Request(`${BASE}/`, { method: "HEAD" }))).status).toBe(200);
    const other = await m.send(new Request(`${BASE}/v1/messages/count_tokens`, { method: "POST", body: "{}" }));
    expect(other.status).toBe(500);
    expect(m.recorder.requests().map((r) => r.served.kind)).toEqual(["head", "unmatched"]);
    expect(m.failures.map((f) => f.message)).toEqual([`nothing in ${SOURCE} answers POST /v1/messages/count_tokens`]);
    expect(remainingTurns(m.handlers), "a failure takes no turn").toBe(1);
  });

  it("ids are unique across the conversation: the tool-use id follows the request's sequence", async () => {
    const m = model(load([{ tool_use: { name: "Read", input: {} } }, { tool_use: { name: "Read", input: {} } }]));
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push(parseSse(await (await m.send(call(FIRST))).text())[1]!.data.content_block.id);
    expect(new Set(ids).size).toBe(2);
  });

  it("a dynamic reply reads the tool results of the request's last message only", async () => {
    const branch: Reply = { when_tool_result_contains: "needle", then: { text: "then" }, else: { text: "else" } };
    const text = async (body: unknown) =>
      parseSse(await (await model(load([branch])).send(call(body))).text())[2]!.data.delta.text;
    expect(await text(withResults(["hay", "a needle here"]))).toBe("then");
    expect(await text(withResults(["hay"]))).toBe("else");
    expect(await text(withResults(["hay"], ["an older needle"])), "an earlier turn's result does not count").toBe(
      "else",
    );
    expect(
      await text(
        withResults([
          [
            { type: "text", text: "block " },
            { type: "text", text: "needle" },
          ],
        ]),
      ),
      "results given as text blocks",
    ).toBe("then");

    const echo = async (body: unknown) =>
      parseSse(
        await (
          await model(
            load([{ text_from_tool_results: { template: "[{{tool_results}}] last={{last_tool_result}}" } }]),
          ).send(call(body))
        ).text(),
      )[2]!.data.delta.text;
    expect(await echo(withResults(["one", "two"]))).toBe("[one\ntwo] last=two");
    expect(await echo(FIRST), "no result yet: a visible stand-in, not an empty text").toBe(
      `[${NO_TOOL_RESULT}] last=${NO_TOOL_RESULT}`,
    );
  });

  it("a turn that throws is a recorded 500 naming the turn, and the next turn still serves", async () => {
    const m = model(load([{ text_from_tool_results: { template: "{{last_tool_result}}" } }, { text: "next" }]));
    const res = await m.send(call("this is not JSON"));
    expect(res.status).toBe(500);
    expect(res.headers.get("x-should-retry")).toBe("false");
    expect(m.failures).toEqual([
      {
        kind: "handler-threw",
        seq: 1,
        method: "POST",
        url: "/v1/messages?beta=true",
        message: expect.stringMatching(new RegExp(`^turns\\[0\\] of ${SOURCE} threw: `)),
      },
    ]);
    expect(parseSse(await (await m.send(call(FIRST))).text())[2]!.data.delta.text).toBe("next");
  });

  it("respond() turns any throwing handler into a recorded 500, and no handler at all into a recorded failure", async () => {
    const recorder = new ScriptRecorder();
    const boom = http.post("*/v1/messages", () => {
      throw new Error("boom");
    });
    const res = await respond([boom], call(FIRST), recorder);
    expect(res.status).toBe(500);
    expect(recorder.failures()).toEqual([
      expect.objectContaining({
        kind: "handler-threw",
        message: "a handler threw on POST /v1/messages?beta=true: boom",
      }),
    ]);
    const none = await respond([], call(FIRST), recorder);
    expect(none.status).toBe(500);
    expect(recorder.failures().map((f) => f.kind)).toEqual(["handler-threw", "unmatched"]);
  });

  it("records every request's body", async () => {
    const m = model(load([{ text: "a" }]));
    await m.send(call(withResults(["r"])));
    expect(JSON.parse(m.recorder.requests()[0]!.body)).toEqual(withResults(["r"]));
  });
});

describe("recording redacts credential headers to a keyed marker", () => {
  const KEY = "stand-in-api-key-1";
  const headers = {
    "x-api-key": KEY,
    authorization: "Bearer stand-in-token-2",
    cookie: "session=stand-in-cookie-3",
    "x-custom-token": "stand-in-4",
    "x-tenant": "stand-in-5",
    "anthropic-version": "2023-06-01",
  };

  it("no credential value is stored; other headers are kept; a known value can still be recognised", async () => {
    const recorder = new ScriptRecorder({ redact: ["X-Tenant"] });
    const handlers = handlersFor(load([{ text: "a" }, { text: "b" }]), recorder);
    await respond(handlers, call(FIRST, headers), recorder);
    await respond(handlers, call(FIRST, { ...headers, "x-api-key": "stand-in-api-key-other" }), recorder);
    const [first, second] = recorder.requests() as unknown as [
      { headers: Record<string, string> },
      { headers: Record<string, string> },
    ];
    const stored = JSON.stringify(recorder.requests());
    for (const v of ["stand-in-api-key", "stand-in-token-2", "stand-in-cookie-3", "stand-in-4", "stand-in-5"])
      expect(stored.includes(v), `${v} is not stored`).toBe(false);
    for (const h of ["x-api-key", "authorization", "cookie", "x-custom-token", "x-tenant"])
      expect(first.headers[h]).toMatch(/^<redacted:[0-9a-f]{16}>$/);
    expect(first.headers["anthropic-version"], "a header that is no credential is kept").toBe("2023-06-01");
    expect(first.headers["x-api-key"], "two values are told apart").not.toBe(second.headers["x-api-key"]);
    expect(first.headers.authorization, "the same value gives the same marker").toBe(second.headers.authorization);
    expect(recorder.credentialSeen("x-api-key", KEY)).toBe(true);
    expect(recorder.credentialSeen("X-Api-Key", "stand-in-api-key-other")).toBe(true);
    expect(recorder.credentialSeen("x-api-key", "placeholder-key"), "a value never sent is not seen").toBe(false);
    expect(recorder.credentialSeen("authorization", KEY), "a value is seen only in its header").toBe(false);
    expect(
      () => recorder.credentialSeen("anthropic-version", "2023-06-01"),
      "a header kept in clear cannot be asked about",
    ).toThrow(/not redacted/);
  });

  it("the marker is keyed per recorder: a saved record cannot be checked against a guessed value", () => {
    expect(new ScriptRecorder().markerFor(KEY)).not.toBe(new ScriptRecorder().markerFor(KEY));
  });
});

describe("toolResultsIn", () => {
  it("reads every tool result of the conversation, string or text blocks", () => {
    const body = JSON.stringify(
      withResults(
        [
          "now",
          [
            { type: "text", text: "a" },
            { type: "text", text: "b" },
          ],
        ],
        ["before"],
      ),
    );
    expect(toolResultsIn(body)).toEqual(["before", "now", "a\nb"]);
    expect(latestToolResults(body)).toEqual(["now", "a\nb"]);
    expect(toolResultsIn(undefined)).toEqual([]);
  });
});
