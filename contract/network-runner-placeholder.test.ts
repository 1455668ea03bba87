// The edges of placeholder.ts the generated sweep found untested: which variable each credential
// set's placeholder goes in, and the api-key set as the fallback for a launch with no known set.
import { describe, expect, it } from "vitest";
import { CREDENTIAL_PLACEHOLDER, placeholderEnv, upstreamCredential } from "../src/core/network/placeholder.ts";

const url = "http://127.0.0.1:8787";
const real = "sk-real-value";

describe("placeholderEnv", () => {
  // The variable names are Claude Code's own: ANTHROPIC_AUTH_TOKEN (a bearer token, used with
  // ANTHROPIC_BASE_URL), CLAUDE_CODE_OAUTH_TOKEN (a subscription token), ANTHROPIC_API_KEY (a key).
  it("each set's placeholder goes in that set's own variable, beside the in-sandbox model URL", () => {
    expect(placeholderEnv("proxy", url)).toEqual({
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_AUTH_TOKEN: CREDENTIAL_PLACEHOLDER,
    });
    expect(placeholderEnv("oauth", url)).toEqual({
      ANTHROPIC_BASE_URL: url,
      CLAUDE_CODE_OAUTH_TOKEN: CREDENTIAL_PLACEHOLDER,
    });
    expect(placeholderEnv("api-key", url)).toEqual({
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: CREDENTIAL_PLACEHOLDER,
    });
    expect(placeholderEnv(null, url), "no set: an API key").toEqual({
      ANTHROPIC_BASE_URL: url,
      ANTHROPIC_API_KEY: CREDENTIAL_PLACEHOLDER,
    });
  });
});

describe("upstreamCredential", () => {
  it("no set, or one the table does not name, reads the API key and sends it as x-api-key", () => {
    const hostEnv = { ANTHROPIC_API_KEY: real, CLAUDE_CODE_OAUTH_TOKEN: "oauth-value", ANTHROPIC_AUTH_TOKEN: "t" };
    expect(upstreamCredential(null, hostEnv)).toEqual({ header: "x-api-key", value: real });
    expect(upstreamCredential("no-such-set", hostEnv)).toEqual({ header: "x-api-key", value: real });
  });
});
