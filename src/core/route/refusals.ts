/** Every code the launcher refuses with, in the order its checks run, each with why it exists. */
export const REFUSALS = [
  {
    code: "partial-fallback",
    why: "a fallback with some of harness, model and thinking set would launch a route nobody chose in full",
  },
  {
    code: "no-route",
    why: "a session's harness, model and thinking come only from the instance's vars; the system's execution keys are never read",
  },
  { code: "harness-off", why: "only switched-on harness modules may run a session" },
  {
    code: "harness-refused",
    why: "only the pi and claude-code modules exist; any other name would run an unconfined CLI",
  },
  {
    code: "thinking-unsupported",
    why: "a level the CLI does not accept fails at the first turn, after the launch was recorded",
  },
  { code: "unknown-model", why: "only models in launch.models may be used, primary or fallback" },
  {
    code: "preflight",
    why: "the harness binary must exist and run (and Pi needs node 22.19 or newer) before a run directory is made",
  },
  { code: "sandbox-unavailable", why: "there is no unconfined path: without a working bwrap no session starts" },
  {
    code: "founder-credentials",
    why: "a founder credential in the environment that reaches the session is a key to everything outside it",
  },
  {
    code: "no-session-credential",
    why: "a Claude Code session without a full credential set cannot reach its model, and a partial proxy set would send its token to the public API",
  },
] as const;

export type RefusalCode = (typeof REFUSALS)[number]["code"];

export type Refusal = { kind: "refuse"; code: RefusalCode; message: string };

export function refuse(code: RefusalCode, message: string): Refusal {
  return { kind: "refuse", code, message };
}
