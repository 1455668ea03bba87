// What a test file registers and what it reads, from its source text alone (TypeScript's parser,
// nothing run): each test and describe with its name, its modifiers (`fails`, `skipIf(...)`), the
// conditions and loops it is registered under, the early returns of its body and the rows of its
// table; the environment variables the file reads; and its knobs, the numbers that set how much a
// test checks (a count's default, a bound, a timeout). The proof review compares two of these.
import ts from "typescript";

export type TestSite = {
  kind: "test" | "describe";
  /** The describe path and the name, ` > ` between; a computed name is its source in brackets. */
  name: string;
  /** `fails`, `skip`, `only`, `todo`, `concurrent`, `skipIf(<cond>)`, `each(<table>)`, ... */
  modifiers: string[];
  /** Conditions and loops between the registration and its describe (or the file), as written. */
  under: string[];
  /** `return` statements of the test's own function other than its last statement. */
  earlyReturns: number;
  /** Rows of the literal table an `each` or an enclosing loop runs over, when the file has it. */
  rows: number | null;
  line: number;
};

export type Knob = { key: string; value: number; line: number };

export type TestInventory = {
  sites: TestSite[];
  /** Each environment variable the file reads (`process.env.X`, `isCi()` as CI), and how often. */
  envReads: Record<string, number>;
  knobs: Knob[];
  /** Syntax errors: an inventory of a file that does not parse is not trusted. */
  problems: string[];
};

/** What registers a test or a describe; vitest's names and the tiers' own (`liveIt` returns an `it`). */
const REGISTRARS: Record<string, TestSite["kind"]> = {
  it: "test",
  test: "test",
  describe: "describe",
  suite: "describe",
};
const HOOKS = new Set(["beforeAll", "afterAll", "beforeEach", "afterEach"]);
/** Chain members that take arguments before the registration's own: `it.each(t)(name, fn)`. */
const CALLED_MODIFIERS = new Set(["each", "for", "skipIf", "runIf"]);
/** Object properties whose number sets how much a test checks, wherever they stand. */
export const KNOB_PROPERTIES = new Set(["numRuns", "timeout", "testTimeout", "hookTimeout", "retry", "repeats"]);
const CONST_KNOB = /^[A-Z][A-Z0-9_]*$/;

type Chain = { root: string; parts: string[] };

/** `it.concurrent.skipIf(x)` as its root and parts, arguments of called parts kept as written. */
function chainOf(e: ts.Expression, sf: ts.SourceFile): Chain | null {
  if (ts.isIdentifier(e)) return { root: e.text, parts: [] };
  if (ts.isPropertyAccessExpression(e)) {
    const c = chainOf(e.expression, sf);
    return c && { root: c.root, parts: [...c.parts, e.name.text] };
  }
  if (ts.isCallExpression(e)) {
    const c = chainOf(e.expression, sf);
    const last = c?.parts.at(-1);
    if (!c || last === undefined || !CALLED_MODIFIERS.has(last)) return null;
    return {
      root: c.root,
      parts: [...c.parts.slice(0, -1), `${last}(${e.arguments.map((a) => a.getText(sf)).join(", ")})`],
    };
  }
  return null;
}

/** The value of a number written as a constant expression (`5 * 60_000`, `"16"`), or null. */
export function numberOf(e: ts.Expression): number | null {
  if (ts.isNumericLiteral(e)) return Number(e.text);
  if (ts.isStringLiteral(e)) return /^\d+(\.\d+)?$/.test(e.text) ? Number(e.text) : null;
  if (ts.isParenthesizedExpression(e)) return numberOf(e.expression);
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken) {
    const v = numberOf(e.operand);
    return v === null ? null : -v;
  }
  if (ts.isBinaryExpression(e)) {
    const a = numberOf(e.left);
    const b = numberOf(e.right);
    if (a === null || b === null) return null;
    const op = e.operatorToken.kind;
    if (op === ts.SyntaxKind.AsteriskToken) return a * b;
    if (op === ts.SyntaxKind.PlusToken) return a + b;
    if (op === ts.SyntaxKind.MinusToken) return a - b;
    if (op === ts.SyntaxKind.SlashToken) return a / b;
  }
  return null;
}

function nameOf(e: ts.Expression | undefined, sf: ts.SourceFile): string {
  if (e === undefined) return "(no name)";
  if (ts.isStringLiteral(e) || ts.isNoSubstitutionTemplateLiteral(e)) return e.text;
  return ts.isTemplateExpression(e) ? e.getText(sf) : `[${e.getText(sf)}]`;
}

const isFunction = (e: ts.Node | undefined): e is ts.ArrowFunction | ts.FunctionExpression =>
  e !== undefined && (ts.isArrowFunction(e) || ts.isFunctionExpression(e));

/** Returns of a function's own body (not of functions inside it) other than its last statement. */
export function countEarlyReturns(fn: ts.ArrowFunction | ts.FunctionExpression): number {
  if (!ts.isBlock(fn.body)) return 0;
  const last = fn.body.statements.at(-1);
  let n = 0;
  const walk = (node: ts.Node) => {
    if (ts.isFunctionLike(node)) return;
    if (ts.isReturnStatement(node) && node !== last) n++;
    ts.forEachChild(node, walk);
  };
  fn.body.statements.forEach(walk);
  return n;
}

/** The initializer of a top-level `const name = ...`, its `as const` and `satisfies` taken off. */
function topConst(sf: ts.SourceFile, name: string): ts.Expression | null {
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations)
      if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer) {
        let e: ts.Expression = d.initializer;
        while (ts.isAsExpression(e) || ts.isSatisfiesExpression(e) || ts.isParenthesizedExpression(e)) e = e.expression;
        return e;
      }
  }
  return null;
}

/**
 * Rows of a table as written in this file: an array literal, a top-level const holding one (or an
 * object literal, through `Object.entries/keys/values`), or such a table's `.filter(...)` (its
 * rows before the filter). Null when the table lives elsewhere or is computed.
 */
export function rowsOf(e: ts.Expression, sf: ts.SourceFile): number | null {
  if (ts.isArrayLiteralExpression(e)) return e.elements.length;
  if (ts.isObjectLiteralExpression(e)) return e.properties.length;
  if (ts.isIdentifier(e)) {
    const init = topConst(sf, e.text);
    return init && (ts.isArrayLiteralExpression(init) || ts.isObjectLiteralExpression(init)) ? rowsOf(init, sf) : null;
  }
  if (ts.isCallExpression(e) && ts.isPropertyAccessExpression(e.expression)) {
    const callee = e.expression;
    const obj = callee.expression.getText(sf);
    if (obj === "Object" && ["entries", "keys", "values"].includes(callee.name.text) && e.arguments[0])
      return rowsOf(e.arguments[0], sf);
    if (["filter", "slice", "map"].includes(callee.name.text)) return rowsOf(callee.expression, sf);
  }
  return null;
}

/** A table a modifier names: `each(TABLE)`. */
function rowsOfModifier(call: ts.CallExpression, sf: ts.SourceFile): number | null {
  for (let e: ts.Expression = call.expression; ts.isCallExpression(e) || ts.isPropertyAccessExpression(e); ) {
    if (ts.isCallExpression(e)) {
      const c = e.expression;
      if (ts.isPropertyAccessExpression(c) && ["each", "for"].includes(c.name.text) && e.arguments[0])
        return rowsOf(e.arguments[0], sf);
      e = c;
    } else e = e.expression;
  }
  return null;
}

/** The condition or loop a child of `node` is registered under, as written, or null. */
function controlOf(node: ts.Node, child: ts.Node, sf: ts.SourceFile): { text: string; rows: number | null } | null {
  const t = (n: ts.Node) => n.getText(sf);
  if (ts.isIfStatement(node) && child !== node.expression)
    return { text: `${child === node.elseStatement ? "else of " : ""}if (${t(node.expression)})`, rows: null };
  if (ts.isConditionalExpression(node) && child !== node.condition)
    return { text: `${t(node.condition)} ${child === node.whenTrue ? "?" : ":"}`, rows: null };
  if (ts.isBinaryExpression(node) && child === node.right) {
    const op = node.operatorToken.kind;
    if (
      op === ts.SyntaxKind.AmpersandAmpersandToken ||
      op === ts.SyntaxKind.BarBarToken ||
      op === ts.SyntaxKind.QuestionQuestionToken
    )
      return { text: `${t(node.left)} ${node.operatorToken.getText(sf)}`, rows: null };
  }
  if (ts.isCaseClause(node) || ts.isDefaultClause(node)) return { text: `switch ${t(node).split(":")[0]}`, rows: null };
  if (ts.isForOfStatement(node) && child === node.statement)
    return { text: `for (${t(node.initializer)} of ${t(node.expression)})`, rows: rowsOf(node.expression, sf) };
  if (
    (ts.isForInStatement(node) || ts.isForStatement(node) || ts.isWhileStatement(node) || ts.isDoStatement(node)) &&
    child === node.statement
  )
    return { text: t(node).split(")")[0] + ")", rows: null };
  if (ts.isTryStatement(node)) return { text: child === node.tryBlock ? "try" : "catch or finally", rows: null };
  if (isFunction(node)) {
    const call = node.parent;
    if (call && ts.isCallExpression(call) && ts.isPropertyAccessExpression(call.expression))
      return { text: `${t(call.expression)}(...)`, rows: rowsOf(call.expression.expression, sf) };
    return { text: "inside a function", rows: null };
  }
  if (ts.isFunctionDeclaration(node)) return { text: `inside function ${node.name?.text ?? ""}`, rows: null };
  return null;
}

type Scope = { path: string[]; under: string[]; rows: number | null };

/** The registration a call is, with its site, or null. */
function siteOf(call: ts.CallExpression, sf: ts.SourceFile, scope: Scope): TestSite | null {
  const chain = chainOf(call.expression, sf);
  const kind = chain && REGISTRARS[chain.root];
  if (!chain || !kind) return null;
  if (chain.parts.some((p) => ["extend", "scoped", "setup"].includes(p))) return null;
  const fn = call.arguments.find(isFunction);
  return {
    kind,
    name: [...scope.path, nameOf(call.arguments[0], sf)].join(" > "),
    modifiers: chain.parts,
    under: scope.under,
    earlyReturns: kind === "test" && fn ? countEarlyReturns(fn) : 0,
    rows: rowsOfModifier(call, sf) ?? scope.rows,
    line: sf.getLineAndCharacterOfPosition(call.getStart(sf)).line + 1,
  };
}

/** Every test and describe of the file, each with the describe path, conditions and loops above it. */
function collectSites(sf: ts.SourceFile): TestSite[] {
  const out: TestSite[] = [];
  const visit = (node: ts.Node, scope: Scope) => {
    if (ts.isCallExpression(node)) {
      const site = siteOf(node, sf, scope);
      if (site) {
        out.push(site);
        const fn = node.arguments.find(isFunction);
        if (site.kind === "describe" && fn) visit(fn.body, { path: site.name.split(" > "), under: [], rows: null });
        return;
      }
    }
    ts.forEachChild(node, (child) => {
      const c = controlOf(node, child, sf);
      visit(child, c ? { ...scope, under: [...scope.under, c.text], rows: c.rows ?? scope.rows } : scope);
    });
  };
  visit(sf, { path: [], under: [], rows: null });
  return out;
}

/** The environment variable an expression reads, when it is `process.env.X` or `process.env["X"]`. */
function envNameOf(e: ts.Node, sf: ts.SourceFile): string | null {
  const isEnv = (x: ts.Expression) => x.getText(sf).replace(/\s/g, "") === "process.env";
  if (ts.isPropertyAccessExpression(e) && isEnv(e.expression)) return e.name.text;
  if (ts.isElementAccessExpression(e) && isEnv(e.expression))
    return ts.isStringLiteral(e.argumentExpression) ? e.argumentExpression.text : "[computed]";
  return null;
}

/** Whether an env access is written, not read: an assignment's target or a delete's operand. */
function isWrite(e: ts.Node): boolean {
  const p = e.parent;
  if (ts.isDeleteExpression(p)) return true;
  return ts.isBinaryExpression(p) && p.left === e && p.operatorToken.kind === ts.SyntaxKind.EqualsToken;
}

function collectEnvReads(sf: ts.SourceFile): Record<string, number> {
  const out: Record<string, number> = {};
  const add = (k: string) => (out[k] = (out[k] ?? 0) + 1);
  const visit = (node: ts.Node) => {
    const name = envNameOf(node, sf);
    if (name !== null && !isWrite(node)) add(name);
    else if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === "isCi")
      add("CI");
    else if (ts.isVariableDeclaration(node) && node.initializer && ts.isObjectBindingPattern(node.name)) {
      if (node.initializer.getText(sf).replace(/\s/g, "") === "process.env")
        for (const el of node.name.elements) add((el.propertyName ?? el.name).getText(sf));
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/**
 * The file's knobs: an environment variable's numeric default (`process.env.N ?? 16`), a top-level
 * SCREAMING_CASE const set to a number, a registration's or hook's timeout argument, and a
 * number under a knob property (`numRuns`, `timeout`, `retry`, ...). Keys name each by where it stands.
 */
function collectKnobs(sf: ts.SourceFile, sites: readonly TestSite[]): Knob[] {
  const out: Knob[] = [];
  const seen = new Map<string, number>();
  const push = (key: string, value: number | null, node: ts.Node) => {
    if (value === null) return;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    out.push({
      key: n === 1 ? key : `${key} #${n}`,
      value,
      line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1,
    });
  };
  const siteAt = (line: number) => sites.findLast((s) => s.line <= line)?.name ?? "(file)";
  const visit = (node: ts.Node) => {
    if (
      ts.isBinaryExpression(node) &&
      [ts.SyntaxKind.QuestionQuestionToken, ts.SyntaxKind.BarBarToken].includes(node.operatorToken.kind)
    ) {
      const name = envNameOf(node.left, sf);
      if (name !== null) push(`default of ${name}`, numberOf(node.right), node);
    }
    if (ts.isVariableStatement(node) && node.parent === sf)
      for (const d of node.declarationList.declarations)
        if (ts.isIdentifier(d.name) && CONST_KNOB.test(d.name.text) && d.initializer)
          push(`const ${d.name.text}`, numberOf(d.initializer), d);
    if (ts.isCallExpression(node)) {
      const chain = chainOf(node.expression, sf);
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      if (chain && (REGISTRARS[chain.root] || HOOKS.has(chain.root))) {
        const last = node.arguments.at(-1);
        const what = HOOKS.has(chain.root)
          ? `${chain.root} in ${siteAt(line)}`
          : sites.find((s) => s.line === line)?.name;
        if (last && !isFunction(last) && what) push(`timeout of ${what}`, numberOf(last), last);
      }
    }
    if (ts.isPropertyAssignment(node) && KNOB_PROPERTIES.has(node.name.getText(sf))) {
      const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
      push(`${node.name.getText(sf)} in ${siteAt(line)}`, numberOf(node.initializer), node);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Names made unique in order of appearance: the second test of one name becomes `name #2`. */
function uniqueNames(sites: TestSite[]): TestSite[] {
  const seen = new Map<string, number>();
  return sites.map((s) => {
    const id = `${s.kind} ${s.name}`;
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    return n === 1 ? s : { ...s, name: `${s.name} #${n}` };
  });
}

/** A test file's inventory, from its text. */
export function readTestInventory(path: string, text: string): TestInventory {
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const diagnostics = (sf as unknown as { parseDiagnostics?: ts.Diagnostic[] }).parseDiagnostics ?? [];
  const sites = uniqueNames(collectSites(sf));
  return {
    sites,
    envReads: collectEnvReads(sf),
    knobs: collectKnobs(sf, sites),
    problems: diagnostics.map((d) => `${path}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`),
  };
}
