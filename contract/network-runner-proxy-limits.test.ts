// The edges of proxy-limits.ts the generated sweep found untested: each refusal whole (status, the
// Messages API's error type, message), and a session holding exactly heldBytes still passing.
import { describe, expect, it } from "vitest";
import { decideBodySize } from "../src/core/network/proxy-limits.ts";

const l = { bodyBytes: 100, heldBytes: 150 };

describe("decideBodySize", () => {
  it("a body past bodyBytes: 413 request_too_large, the Messages API's own answer to a body past its limit", () => {
    expect(decideBodySize(l, { declared: 101, read: 0, held: 0 })).toEqual({
      kind: "refuse",
      status: 413,
      errorType: "request_too_large",
      message: "the request body is over the session's proxy bound of 100 bytes (the Messages API's own limit)",
    });
  });
  it("held bytes at heldBytes pass; one more is 429 rate_limit_error, so the client retries", () => {
    expect(decideBodySize(l, { declared: null, read: 100, held: 150 })).toEqual({ kind: "pass" });
    expect(decideBodySize(l, { declared: null, read: 100, held: 151 })).toEqual({
      kind: "refuse",
      status: 429,
      errorType: "rate_limit_error",
      message: "the session's requests hold over 150 bytes of body at once; retry when one has finished",
    });
  });
});
