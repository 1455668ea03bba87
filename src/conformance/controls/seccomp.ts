// Changing the seccomp rules on purpose, for a positive control: a rule, a check or the socket
// family allowlist taken out of the shipped SECCOMP_RULES.
import { SECCOMP_RULES, type SeccompRules } from "../../core/sandbox/seccomp.ts";

/** The rules without the deny or ioctl rule of that name. */
export function withoutSeccompRule(rules: SeccompRules | null, name: string): SeccompRules {
  const r = rules ?? SECCOMP_RULES;
  return { ...r, deny: r.deny.filter((d) => d.name !== name), ioctl: r.ioctl.filter((d) => d.name !== name) };
}

/** The rules with one of their whole-filter checks changed. */
export const withSeccompCheck = (rules: SeccompRules | null, edit: Partial<SeccompRules>): SeccompRules => ({
  ...(rules ?? SECCOMP_RULES),
  ...edit,
});
