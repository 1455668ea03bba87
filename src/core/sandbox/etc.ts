/**
 * What a session sees of the host's /etc: these entries and nothing else, each bound read-only
 * where the host has it (bwrap's --ro-bind-try: a host without one simply lacks it inside). The
 * rest of /etc stays out: an environment file or a service's config can hold a key, and nothing in
 * a session needs them. Each entry says what in a session reads it.
 */
export const ETC_FILES: readonly { path: string; why: string }[] = [
  { path: "/etc/passwd", why: "user names for ls, git and the CLIs' own user lookup" },
  { path: "/etc/group", why: "group names for ls and id" },
  { path: "/etc/nsswitch.conf", why: "libc's choice of where passwd, group and hosts come from" },
  { path: "/etc/hosts", why: "localhost, which tools resolve for the model port" },
  { path: "/etc/host.conf", why: "libc's resolver order" },
  { path: "/etc/ld.so.cache", why: "the dynamic linker's library cache" },
  { path: "/etc/ld.so.conf", why: "the dynamic linker's search path" },
  { path: "/etc/ld.so.conf.d", why: "the dynamic linker's search path, by package" },
  { path: "/etc/alternatives", why: "Debian's links behind awk, editor, pager and friends in /usr/bin" },
  { path: "/etc/localtime", why: "the local time zone" },
  { path: "/etc/timezone", why: "the time zone's name" },
  { path: "/etc/os-release", why: "the distribution, which tools print and some read" },
  { path: "/etc/protocols", why: "protocol names getprotobyname() reads" },
  { path: "/etc/services", why: "service names getservbyname() reads" },
  { path: "/etc/ssl/certs", why: "public CA certificates a TLS library may load at start; no private key" },
]; // safety: etc-allowlist-whole
