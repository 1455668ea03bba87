type EnvEntry = { name: string; why: string };

/**
 * The only host variables that reach a session. HOME and TMPDIR are set by bwrap to the run's
 * own home/ and private /tmp, so they are not here. No model credential is: the session holds a
 * placeholder and the host's proxy adds the real one (core/network/placeholder.ts).
 */
export const ENV_ALLOW: readonly EnvEntry[] = [
  { name: "PATH", why: "finding sh, git and the harness; inside the sandbox it reaches only /usr and the bound files" },
  { name: "LANG", why: "the locale tools print in" },
  { name: "LC_ALL", why: "the locale tools print in" },
  { name: "TZ", why: "timestamps the harness writes" },
  { name: "TERM", why: "tools that format for a terminal" },
  { name: "USER", why: "the user's name, which git and ssh-less tools ask for" },
  { name: "LOGNAME", why: "the user's name, for tools that read LOGNAME" },
  { name: "NODE_EXTRA_CA_CERTS", why: "a proxy's CA, read from /etc inside the sandbox" }, // safety: env-allow-look-alike
  { name: "MOSAIC_CLAUDE_BIN", why: "the pinned Claude Code binary the adapter runs" }, // safety: env-allow-credential
];

/**
 * Variables a founder's shell carries that must never reach a session: each one is a key to
 * something outside the session's own files. The runner exits 20 when one is present.
 */
export const FOUNDER_ENV: readonly EnvEntry[] = [
  { name: "GITEA_TOKEN", why: "the founder's forge token" }, // safety: founder-gitea-dropped
  { name: "GH_TOKEN", why: "GitHub CLI token" },
  { name: "GITHUB_TOKEN", why: "GitHub token" },
  { name: "GITLAB_TOKEN", why: "GitLab token" },
  { name: "TEA_TOKEN", why: "the tea CLI's token" }, // safety: founder-tea-dropped
  { name: "SSH_AUTH_SOCK", why: "the ssh agent: every key the founder has loaded" }, // safety: founder-ssh-agent-dropped
  { name: "SSH_AGENT_PID", why: "names the founder's ssh agent" },
  { name: "GIT_ASKPASS", why: "a helper that hands out git passwords" },
  { name: "SSH_ASKPASS", why: "a helper that hands out ssh passphrases" },
  { name: "GIT_SSH_COMMAND", why: "can name a founder key with -i" },
  { name: "GIT_CONFIG_GLOBAL", why: "points git at the founder's config and its credential helper" },
  { name: "GPG_AGENT_INFO", why: "the founder's gpg agent" },
  { name: "NPM_TOKEN", why: "publishes packages as the founder" },
  { name: "NODE_AUTH_TOKEN", why: "publishes packages as the founder" },
  { name: "AWS_ACCESS_KEY_ID", why: "cloud credentials" },
  { name: "AWS_SECRET_ACCESS_KEY", why: "cloud credentials" },
  { name: "AWS_SESSION_TOKEN", why: "cloud credentials" },
  { name: "GOOGLE_APPLICATION_CREDENTIALS", why: "names a cloud service-account key file" },
  { name: "DOCKER_HOST", why: "a Docker engine is root on its host" },
  { name: "DBUS_SESSION_BUS_ADDRESS", why: "the user's systemd manager, which runs commands outside the sandbox" }, // safety: founder-dbus-dropped
  { name: "XDG_RUNTIME_DIR", why: "holds the user's bus, agent and keyring sockets" },
  { name: "KRB5CCNAME", why: "the founder's Kerberos tickets" },
  { name: "MOSAIC_FOUNDER_TOKEN", why: "the founder's own bus capability" },
];

const ALLOWED = new Set(ENV_ALLOW.map((e) => e.name));

/** The environment a session starts with: the allowed variables that are set, nothing else. */
export function sessionEnv(hostEnv: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of Object.keys(hostEnv).sort()) {
    const value = hostEnv[name];
    if (value !== undefined && ALLOWED.has(name)) out[name] = value; // safety: env-passes-all // safety: env-prefix-match // safety: env-case-folded
  }
  return out;
}

/** The FOUNDER_ENV names present in an environment (set, even to an empty string). */
export function founderVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  return FOUNDER_ENV.map((e) => e.name).filter((n) => env[n] !== undefined); // safety: founder-env-ignored
}
