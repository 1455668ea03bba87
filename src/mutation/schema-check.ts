// A check of a JSON value against the subset of JSON Schema (draft 7) that the
// mutation-testing-report-schema uses, so a test can hold the report to the published schema
// without another dependency. Keywords outside the subset are refused, not ignored.

type Schema = { [k: string]: unknown };

const KNOWN = new Set([
  "$schema",
  "$id",
  "title",
  "description",
  "examples",
  "default",
  "definitions",
  "type",
  "required",
  "properties",
  "additionalProperties",
  "items",
  "enum",
  "pattern",
  "minimum",
  "maximum",
  "uniqueItems",
  "$ref",
]);

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function typeMatches(want: string, got: string): boolean {
  return want === got || (want === "number" && got === "integer");
}

/** Every place value breaks schema, as `path: problem`; empty when it conforms. */
export function findSchemaProblems(schema: Schema, value: unknown, root: Schema = schema, path = "$"): string[] {
  const unknownKeys = Object.keys(schema).filter((k) => !KNOWN.has(k));
  if (unknownKeys.length > 0)
    return [`${path}: schema keyword(s) ${unknownKeys.join(", ")} not supported by this check`];
  if (typeof schema.$ref === "string") {
    const m = /^#\/definitions\/(.+)$/.exec(schema.$ref);
    const target = m ? (root.definitions as Record<string, Schema> | undefined)?.[m[1]!] : undefined;
    return target ? findSchemaProblems(target, value, root, path) : [`${path}: unresolvable $ref ${schema.$ref}`];
  }
  const problems: string[] = [];
  const got = typeOf(value);
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
    if (!types.some((t) => typeMatches(t, got))) return [`${path}: expected ${types.join(" or ")}, got ${got}`];
  }
  if (Array.isArray(schema.enum) && !schema.enum.includes(value))
    problems.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (typeof schema.pattern === "string" && typeof value === "string" && !new RegExp(schema.pattern, "u").test(value))
    problems.push(`${path}: does not match ${schema.pattern}`);
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) problems.push(`${path}: below ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) problems.push(`${path}: above ${schema.maximum}`);
  }
  if (got === "array") {
    const arr = value as unknown[];
    if (schema.uniqueItems === true && new Set(arr.map((x) => JSON.stringify(x))).size !== arr.length)
      problems.push(`${path}: items are not unique`);
    if (schema.items && typeof schema.items === "object")
      arr.forEach((x, i) => problems.push(...findSchemaProblems(schema.items as Schema, x, root, `${path}[${i}]`)));
  }
  if (got === "object") {
    const obj = value as Record<string, unknown>;
    for (const r of (schema.required as string[] | undefined) ?? [])
      if (!(r in obj)) problems.push(`${path}: missing ${r}`);
    const props = (schema.properties as Record<string, Schema> | undefined) ?? {};
    for (const [k, v] of Object.entries(obj)) {
      if (k in props) problems.push(...findSchemaProblems(props[k]!, v, root, `${path}.${k}`));
      else if (schema.additionalProperties === false) problems.push(`${path}: unexpected property ${k}`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === "object")
        problems.push(...findSchemaProblems(schema.additionalProperties as Schema, v, root, `${path}.${k}`));
    }
  }
  return problems;
}
