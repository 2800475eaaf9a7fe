/**
 * `npm run lint`: a static ReDoS check of every regular expression in the
 * TypeScript files under a directory (default: src).
 *
 *   npx tsx scripts/check-regex.ts [dir] [--verbose]
 *
 * Finds, with the TypeScript compiler API:
 * - every regular-expression literal (`/.../flags`);
 * - every `new RegExp(p, f)` and `RegExp(p, f)` whose pattern (and flags) are
 *   known at compile time: a string literal, a template literal, `+` of such,
 *   or a `const` bound to one (in this file or imported from another file
 *   under dir), with `a ? "x" : "y"` giving each of its values.
 * Each is checked by recheck (automaton analysis, fuzzing where the automaton
 * is too large), pure-JavaScript backend: no native binary, no JVM, no network.
 * recheck asks about the way V8 runs the regex: backtracking inside one attempt
 * and, for an unanchored regex (or one with the g flag), the retry at every
 * start offset; a sticky (y) regex is one attempt at lastIndex.
 *
 * Prints `file:line:col  /regex/flags  <verdict>` for each regex that is
 * vulnerable (with its complexity, an attack string and the hot part of the
 * pattern) or that recheck could not decide (a timeout, an unsupported flag
 * such as v), and exits 1 if there is any; 0 otherwise. A `RegExp` built from
 * a value only known at run time is listed as a note (a person reads it) and
 * does not fail the check.
 *
 * A regex that is super-linear but safe where it is used (its input is short
 * by construction, or trusted) can be let through with a comment on the line
 * before it, or at the end of its line, giving the reason:
 *   // redos-safe: the input is at most 256 characters (checked just before)
 * Prefer a linear rewrite; an allowed regex is still listed as a note, and a
 * redos-safe comment on a regex found safe is reported as stale (exit 1).
 *
 * RECHECK_BACKEND=native (or auto) in the environment uses recheck's prebuilt
 * binary instead when the optional package for this platform is installed
 * (faster, same verdicts).
 */
import { readdirSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { check, type Diagnostics } from "recheck";
import ts from "typescript";

process.env.RECHECK_BACKEND ??= "pure";

const ALLOW = /\/\/\s*redos-safe:\s*\S/;
/** Per regex; the automaton answers in milliseconds, fuzzing in about a second. */
const TIMEOUT_MS = 30_000;

type Found = {
  file: string;
  line: number;
  col: number;
  source: string;
  flags: string;
  allow: string | null;
};
type Dynamic = { file: string; line: number; col: number; text: string };

const args = process.argv.slice(2);
const verbose = args.includes("--verbose");
const dir = resolve(args.find((a) => !a.startsWith("--")) ?? "src");

function tsFiles(d: string): string[] {
  return readdirSync(d, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules" || e.name.startsWith(".")) return [];
    const path = join(d, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return /\.(c|m)?tsx?$/.test(e.name) ? [path] : [];
  });
}

// A program of the files under dir alone: imports between them resolve (for
// constants), anything else (node_modules, lib) is never read.
const files = tsFiles(dir).sort();
const host = ts.createCompilerHost({});
const inside = (path: string) =>
  resolve(path).startsWith(`${dir}/`) && !path.includes("/node_modules/");
const fileExists = host.fileExists.bind(host);
host.fileExists = (path) => inside(path) && fileExists(path);
const program = ts.createProgram({
  rootNames: files,
  options: {
    noLib: true,
    noEmit: true,
    types: [],
    target: ts.ScriptTarget.ESNext,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowImportingTsExtensions: true,
  },
  host,
});
const checker = program.getTypeChecker();

/** Every string value `expr` can have, when known at compile time (at most 16 of them). */
function values(expr: ts.Expression, seen = new Set<ts.Node>()): string[] | undefined {
  if (ts.isStringLiteralLike(expr)) return [expr.text];
  if (ts.isNumericLiteral(expr)) return [String(Number(expr.text))];
  if (
    ts.isParenthesizedExpression(expr) ||
    ts.isAsExpression(expr) ||
    ts.isSatisfiesExpression(expr) ||
    ts.isTypeAssertionExpression(expr) ||
    ts.isNonNullExpression(expr)
  ) {
    return values(expr.expression, seen);
  }
  if (ts.isTemplateExpression(expr)) {
    let out = [expr.head.text];
    for (const span of expr.templateSpans) {
      const v = values(span.expression, seen);
      if (v === undefined) return undefined;
      out = product(out, v).map((s) => s + span.literal.text);
    }
    return cap(out);
  }
  if (ts.isBinaryExpression(expr) && expr.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const l = values(expr.left, seen);
    const r = l && values(expr.right, seen);
    return r && cap(product(l, r));
  }
  if (ts.isConditionalExpression(expr)) {
    const a = values(expr.whenTrue, seen);
    const b = a && values(expr.whenFalse, seen);
    return b && cap([...new Set([...a, ...b])]);
  }
  if (ts.isIdentifier(expr)) {
    let symbol = checker.getSymbolAtLocation(expr);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    const decl = symbol?.valueDeclaration;
    if (
      decl &&
      ts.isVariableDeclaration(decl) &&
      decl.initializer &&
      ts.isVariableDeclarationList(decl.parent) &&
      decl.parent.flags & ts.NodeFlags.Const &&
      !seen.has(decl)
    ) {
      seen.add(decl); // a cycle guard: the declarations being evaluated
      const v = values(decl.initializer, seen);
      seen.delete(decl);
      return v;
    }
  }
  return undefined;
}
const product = (a: string[], b: string[]) => a.flatMap((x) => b.map((y) => x + y));
const cap = (v: string[]) => (v.length <= 16 ? v : undefined);

function isRegExpCallee(e: ts.Expression): boolean {
  if (ts.isIdentifier(e)) return e.text === "RegExp";
  return (
    ts.isPropertyAccessExpression(e) &&
    e.name.text === "RegExp" &&
    ts.isIdentifier(e.expression) &&
    e.expression.text === "globalThis"
  );
}

const found: Found[] = [];
const dynamic: Dynamic[] = [];
const seen = new Set<string>();
const add = (r: Found) => {
  const key = `${r.file}:${r.line}:${r.col}:${r.flags.replace("d", "")}/${r.source}`;
  if (!seen.has(key)) found.push(r);
  seen.add(key);
};
for (const file of files) {
  const sf = program.getSourceFile(file);
  if (!sf) continue;
  const lines = sf.text.split("\n");
  const where = (node: ts.Node) => {
    const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    const allowed = [lines[line - 1], lines[line]].find((l) => l !== undefined && ALLOW.test(l));
    return {
      file: relative(process.cwd(), sf.fileName),
      line: line + 1,
      col: character + 1,
      allow: allowed ? (allowed.split("redos-safe:")[1] ?? "").trim() : null,
    };
  };
  const visit = (node: ts.Node): void => {
    if (ts.isRegularExpressionLiteral(node)) {
      const slash = node.text.lastIndexOf("/");
      add({ ...where(node), source: node.text.slice(1, slash), flags: node.text.slice(slash + 1) });
    } else if (
      (ts.isNewExpression(node) || ts.isCallExpression(node)) &&
      isRegExpCallee(node.expression)
    ) {
      const [pattern, flagsArg] = node.arguments ?? [];
      // new RegExp(/literal/, flags): the literal's own flags unless given.
      const literal = pattern && ts.isRegularExpressionLiteral(pattern) ? pattern.text : undefined;
      const sources = literal
        ? [literal.slice(1, literal.lastIndexOf("/"))]
        : pattern
          ? values(pattern)
          : [""];
      const flagSet = flagsArg
        ? values(flagsArg)
        : [literal ? literal.slice(literal.lastIndexOf("/") + 1) : ""];
      const at = where(node);
      if (sources === undefined || flagSet === undefined) {
        dynamic.push({ ...at, text: node.getText(sf).replace(/\s+/g, " ").slice(0, 160) });
      } else {
        for (const source of sources) for (const flags of flagSet) add({ ...at, source, flags });
      }
      // new RegExp(/literal/, flags) is one regex: the one just checked.
      if (literal) {
        for (const a of node.arguments?.slice(1) ?? []) visit(a);
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
}

const cache = new Map<string, Promise<Diagnostics>>();
function diagnose(source: string, flags: string): Promise<Diagnostics> {
  // d (match indices) changes nothing about matching; recheck does not know it.
  const f = flags.replace("d", "");
  const key = `${f}/${source}`;
  let d = cache.get(key);
  if (!d) {
    d = check(source, f, { timeout: TIMEOUT_MS });
    cache.set(key, d);
  }
  return d;
}

function hot(source: string, d: Diagnostics): string {
  if (d.status !== "vulnerable") return "";
  const parts = d.hotspot
    .filter((h) => h.temperature === "heat")
    .map((h) => source.slice(h.start, h.end));
  return parts.length ? `, hot: ${[...new Set(parts)].join(" ")}` : "";
}

let failures = 0;
const notes: string[] = [];
for (const r of found) {
  const d = await diagnose(r.source, r.flags);
  const at = `${r.file}:${r.line}:${r.col}  /${r.source}/${r.flags}`;
  if (d.status === "safe") {
    if (r.allow !== null) {
      failures++;
      console.log(`${at}  stale redos-safe comment: recheck finds it ${d.complexity.summary}`);
    } else if (verbose) console.log(`${at}  ${d.complexity.summary} (${d.checker})`);
    continue;
  }
  const verdict =
    d.status === "vulnerable"
      ? `vulnerable: ${d.complexity.summary}, attack: ${d.attack.pattern}${hot(r.source, d)}`
      : `not decided by recheck (${d.error.kind}${"message" in d.error ? `: ${d.error.message}` : ""}): rewrite it, or allow it with a reason`;
  if (r.allow !== null) notes.push(`${at}  allowed (${r.allow}); ${verdict}`);
  else {
    failures++;
    console.log(`${at}  ${verdict}`);
  }
}
for (const x of dynamic)
  notes.push(`${x.file}:${x.line}:${x.col}  built at run time, not checked: ${x.text}`);
for (const n of notes) console.log(`note: ${n}`);
console.log(
  `check-regex: ${found.length} regexes in ${files.length} files, ${failures} unsafe or undecided, ${dynamic.length} built at run time`,
);
process.exit(failures > 0 ? 1 : 0);
