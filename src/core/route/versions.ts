/** Compares dotted numeric versions ("22.19.0" against "22.19"); missing parts count as 0. */
export function isVersionAtLeast(version: string, minimum: string): boolean {
  const parse = (v: string) =>
    v
      .replace(/^v/, "")
      .split(".")
      .map((p) => Number.parseInt(p, 10));
  const a = parse(version);
  const b = parse(minimum);
  if (a.some((n) => Number.isNaN(n))) return false;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}
