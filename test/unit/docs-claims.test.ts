/**
 * What the README and docs/ name in backticks exists: a file or folder of the
 * repository, an npm script, and every upper-case name (an environment
 * variable, a reason, an enum value) somewhere in the code. A rename that
 * leaves a page behind fails here, not in a newcomer's terminal.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;
const PAGES = [
  "README.md",
  "SECURITY.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** Every file the repository tracks (a fresh clone has exactly these, plus what installs add). */
const TRACKED = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter(Boolean);
const TOP = new Set(TRACKED.map((f) => f.split("/")[0] as string));
const NAMES = new Set(TRACKED.map((f) => basename(f)));
/** Folders and files made by commands the docs give (installs, runs, generators). */
const MADE = ["node_modules/", "test-results/", "dist/", "coverage/"];

/**
 * The code the names must come from: everything tracked but the pages
 * themselves, this file (whose examples name what does not exist) and the
 * lock file (which names every package ever installed).
 */
const CODE = TRACKED.filter(
  (f) =>
    !f.endsWith(".md") &&
    f !== "package-lock.json" &&
    f !== "test/unit/docs-claims.test.ts" &&
    !f.startsWith("docs/images/"),
)
  .map((f) => readFileSync(join(ROOT, f), "utf8"))
  .join("\n");

/** Upper-case names the docs may use that belong to others: Node, the shell, the platforms. */
const FOREIGN = new Set([
  "NODE_OPTIONS",
  "NODE_ENV",
  "NODE_EXTRA_CA_CERTS",
  "SO_REUSEPORT",
  "TCP_NODELAY",
  "ENHANCE_YOUR_CALM",
  "REFUSED_STREAM",
  "PROTOCOL_ERROR",
  "NO_ERROR",
  "CANCEL",
  "FLOW_CONTROL_ERROR",
  "SETTINGS_MAX_CONCURRENT_STREAMS",
  "SETTINGS_INITIAL_WINDOW_SIZE",
  "SETTINGS_MAX_HEADER_LIST_SIZE",
  "GOAWAY",
  "RST_STREAM",
  "WINDOW_UPDATE",
  "ECONNRESET",
  "EADDRINUSE",
  "EPIPE",
  "TIME_WAIT",
  "HTTP_PROXY",
  "HTTPS_PROXY",
  "NO_PROXY",
  "LD_PRELOAD",
  "GOBIN",
  "GOPATH",
  "GOFLAGS",
  "GOPROXY",
  "JAVA_HOME",
  "MAVEN_OPTS",
  "DEBIAN_FRONTEND",
  "UV_THREADPOOL_SIZE",
  "X_OK",
  // The C++ SDK's WinHTTP constant (decisions.md: what each SDK sends).
  "WINHTTP_DEFAULT_ACCEPT_TYPES",
]);

interface Span {
  readonly page: string;
  readonly line: number;
  readonly text: string;
}

/** The code spans of a page and the lines of its code blocks, each with its line number. */
function spansOf(page: string): Span[] {
  const spans: Span[] = [];
  let inBlock = false;
  readFileSync(join(ROOT, page), "utf8")
    .split("\n")
    .forEach((text, i) => {
      const line = i + 1;
      if (text.trimStart().startsWith("```")) {
        inBlock = !inBlock;
        return;
      }
      if (inBlock) {
        spans.push({ page, line, text });
        return;
      }
      for (const [, code] of text.matchAll(/`([^`\n]+)`/g))
        spans.push({ page, line, text: code as string });
    });
  return spans;
}

const SPANS = PAGES.flatMap(spansOf);
const where = (s: Span) => `${s.page}:${s.line}`;

/**
 * A repository path in a span: a word with a slash whose first part is a
 * top-level entry of the repository (`src/http/front.ts`, `deploy/`,
 * `test/slow/install.test.ts:12`), or a bare file name with an extension
 * of ours (`compose.yaml`). URLs, API paths (`/Restore`), placeholders and
 * globs are not paths.
 */
function pathsIn(text: string): string[] {
  const out: string[] = [];
  for (const word of text.split(/[\s"'`(),=;[\]]+/)) {
    if (word === "" || /[*{}<>…$]|:\/\//.test(word) || word.startsWith("/")) continue;
    const path = word
      .replace(/[.:]+$/, "")
      .replace(/(:\d+)+$/, "")
      .replace(/#.*$/, "");
    const first = path.split("/")[0] as string;
    if (path.includes("/")) {
      if (TOP.has(first) || MADE.some((m) => path.startsWith(m))) out.push(path);
    } else if (/^[\w.-]+\.(md|ts|json|yaml|yml|sh|proto|py|toml|binpb)$/.test(path)) {
      out.push(path);
    }
  }
  return out;
}

/** Paths git ignores: made by the commands the docs give (installs, builds, reports). */
function ignored(path: string): boolean {
  try {
    execFileSync("git", ["check-ignore", "-q", "--no-index", path], { cwd: ROOT });
    return true;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  if (MADE.some((m) => path.startsWith(m)) || ignored(path)) return true;
  if (!path.includes("/")) return NAMES.has(path) || existsSync(join(ROOT, path));
  const bare = path.replace(/\/$/, "");
  return TRACKED.some((f) => f === bare || f.startsWith(`${bare}/`));
}

describe("what the docs name exists", () => {
  it("every file or folder of the repository named in backticks", () => {
    const missing = SPANS.flatMap((s) =>
      pathsIn(s.text)
        .filter((p) => !exists(p))
        .map((p) => `${where(s)}: ${p}`),
    );
    expect(missing).toEqual([]);
  });

  it("every npm script named (npm run NAME, npm test, npm start)", () => {
    const scripts = Object.keys(
      (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: object }).scripts,
    );
    const missing: string[] = [];
    for (const s of SPANS) {
      for (const [, name] of s.text.matchAll(/\bnpm run(?: +--?[a-z-]+)* +([\w:.-]+)/g)) {
        if (!scripts.includes(name as string)) missing.push(`${where(s)}: npm run ${name}`);
      }
      for (const [, name] of s.text.matchAll(/\bnpm (test|start)\b/g)) {
        if (!scripts.includes(name as string)) missing.push(`${where(s)}: npm ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("every upper-case name (a setting, a reason, an enum value) appears in the code", () => {
    const missing = new Set<string>();
    for (const s of SPANS) {
      for (const [name] of s.text.matchAll(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g)) {
        if (!FOREIGN.has(name) && !CODE.includes(name)) missing.add(`${where(s)}: ${name}`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it("the check itself finds what it should: a path, a script and a setting that do not exist", () => {
    expect(pathsIn("see test/process/install.test.ts:330 and `deploy/Dockerfile`")).toEqual([
      "test/process/install.test.ts",
      "deploy/Dockerfile",
    ]);
    expect(exists("test/process/install.test.ts")).toBe(false);
    expect(exists("test/slow/install.test.ts")).toBe(true);
    expect(exists("deploy/Dockerfile")).toBe(false);
    expect(exists("Dockerfile")).toBe(true);
    expect(exists("compose.yaml")).toBe(true);
    expect(exists("test/interop/java/target/")).toBe(true);
    expect(exists("OUT/")).toBe(false);
    expect(pathsIn("POST /Restore application/json https://x/y.md")).toEqual([]);
    expect(CODE.includes("ADMISSION_LIMIT_FLOOR")).toBe(true);
    expect(CODE.includes("ADMISSION_LIMIT_FLOR")).toBe(false);
  });
});
