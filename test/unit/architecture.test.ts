/**
 * The rooms of src/ and what each may import (docs/architecture.md; this
 * table and that one are the same, and a test below says so). Imports run downwards only: a room may
 * import the rooms below it, never one above, so no two rooms import each
 * other. This test reads every import of every file and fails on any other.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = new URL("../../src/", import.meta.url).pathname;
const ARCHITECTURE_DOC = new URL("../../docs/architecture.md", import.meta.url).pathname;
const PACKAGE_JSON = new URL("../../package.json", import.meta.url).pathname;

/** Each room's files (by path under src/) and the rooms it may import, bottom first. */
const ROOMS: Record<string, { readonly files: RegExp; readonly mayImport: readonly string[] }> = {
  domain: { files: /^domain\//, mayImport: [] },
  base: { files: /^(env|log|version|call-scope|outbound)\.ts$/, mayImport: [] },
  admission: { files: /^admission\//, mayImport: [] },
  transcoder: { files: /^transcoder\//, mayImport: [] },
  wire: { files: /^wire\//, mayImport: ["domain", "gen"] },
  storage: { files: /^storage\//, mayImport: ["domain"] },
  auth: { files: /^auth\//, mayImport: ["domain", "base"] },
  fixtures: { files: /^fixtures\//, mayImport: ["domain", "storage"] },
  deps: { files: /^deps\.ts$/, mayImport: ["domain", "storage", "auth", "base"] },
  call: { files: /^call\//, mayImport: ["base", "transcoder"] },
  rpc: { files: /^rpc\//, mayImport: ["domain", "wire", "deps", "base", "gen", "call"] },
  protocols: { files: /^protocols\//, mayImport: ["call", "rpc", "wire", "transcoder"] },
  legacy: {
    files: /^legacy\//,
    mayImport: ["rpc", "protocols", "wire", "domain", "gen", "transcoder"],
  },
  observability: {
    files: /^observability\//,
    mayImport: ["rpc", "wire", "base", "admission", "transcoder"],
  },
  config: { files: /^config\.ts$/, mayImport: ["auth", "observability", "base", "admission"] },
  http: {
    files: /^http\//,
    mayImport: [
      "domain",
      "base",
      "wire",
      "deps",
      "rpc",
      "protocols",
      "legacy",
      "observability",
      "config",
      "gen",
      "transcoder",
      "admission",
      "call",
    ],
  },
  main: { files: /^main\.ts$/, mayImport: ["*"] },
};

function roomOf(path: string): string {
  if (path.startsWith("../gen/")) return "gen";
  for (const [room, { files }] of Object.entries(ROOMS)) if (files.test(path)) return room;
  throw new Error(
    `${path} is in no room: add it to ROOMS and to the table of docs/architecture.md`,
  );
}

function sources(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => join(dir, f));
}

/** Every relative import of a file (static and dynamic), as a path under src/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/gms),
    ...text.matchAll(/import\(\s*"(\.[^"]+)"\s*\)/g),
  ].map((m) => m[1] as string);
  return specifiers.map((s) => {
    const target = relative(SRC, join(dirname(file), s));
    return target.endsWith(".ts") ? target : `${target}.ts`;
  });
}

describe("the rooms of src/ import downwards only", () => {
  const files = sources(SRC).map((f) => relative(SRC, f));

  it("every file is in a room", () => {
    for (const file of files) expect(() => roomOf(file), file).not.toThrow();
  });

  it("every import is one its room may make", () => {
    const broken: string[] = [];
    for (const file of files) {
      const from = roomOf(file);
      const allowed = ROOMS[from]?.mayImport ?? [];
      for (const target of importsOf(join(SRC, file))) {
        const to = roomOf(target);
        if (to !== from && !allowed.includes("*") && !allowed.includes(to)) {
          broken.push(`${file} (${from}) imports ${target} (${to})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("the rules have no cycle: a room never allows one that allows it", () => {
    for (const [room, { mayImport }] of Object.entries(ROOMS)) {
      for (const other of mayImport) {
        expect(ROOMS[other]?.mayImport ?? [], `${room} ↔ ${other}`).not.toContain(room);
      }
    }
  });

  it("docs/architecture.md's table names the same rooms with the same rules", () => {
    // Rows look like: | `room` | files | job | `a`, `b` (or — or everything) |
    const documented = Object.fromEntries(
      readFileSync(ARCHITECTURE_DOC, "utf8")
        .split("\n")
        .filter((line) => /^\| `[a-z]+` \|/.test(line))
        .map((line) => {
          const cells = line.split("|").map((c) => c.trim());
          const room = (cells[1] ?? "").replaceAll("`", "");
          const last = cells.at(-2) ?? "";
          const allowed =
            last === "everything" ? ["*"] : [...last.matchAll(/`([a-z]+)`/g)].map((m) => m[1]);
          return [room, [...allowed].sort()];
        }),
    );
    const code = Object.fromEntries(
      Object.entries(ROOMS).map(([room, { mayImport }]) => [room, [...mayImport].sort()]),
    );
    expect(documented).toEqual(code);
  });

  it("the transcoder knows nothing of the service: of packages, only @bufbuild/protobuf and @connectrpc/connect", () => {
    const packages = new Set<string>();
    for (const file of sources(join(SRC, "transcoder"))) {
      const text = readFileSync(file, "utf8");
      for (const m of text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^".][^"]*)"/gms)) {
        packages.add(m[1] as string);
      }
    }
    const outside = [...packages].filter(
      (p) => !/^@bufbuild\/protobuf(\/|$)/.test(p) && !/^@connectrpc\/connect$/.test(p),
    );
    expect(packages.size).toBeGreaterThan(0);
    expect(outside).toEqual([]);
  });

  it("no file imports itself through others: the files of src/ have no cycle", () => {
    expect(cyclesOf(importGraph(files))).toEqual([]);
  });

  it("the legacy profile and the transcoder see no Node request or response: only the Exchange", () => {
    const nodeHttp: string[] = [];
    for (const room of ["legacy", "transcoder"]) {
      for (const file of sources(join(SRC, room))) {
        const name = relative(SRC, file);
        const text = readFileSync(file, "utf8");
        if (/from "node:http2?"/.test(text)) nodeHttp.push(`${name}: node:http`);
        if (importsOf(file).includes("wire/http.ts")) nodeHttp.push(`${name}: wire/http.ts`);
        if (/\bNode(Request|Response|Exchange)\b/.test(text)) nodeHttp.push(`${name}: a Node type`);
      }
    }
    expect(nodeHttp).toEqual([]);
  });

  it("src/ imports only what ships: Node's modules and the dependencies, never a devDependency", () => {
    const { dependencies } = JSON.parse(readFileSync(PACKAGE_JSON, "utf8")) as {
      dependencies: Record<string, string>;
    };
    const outside: string[] = [];
    for (const file of files) {
      for (const name of packagesOf(join(SRC, file))) {
        if (!name.startsWith("node:") && !(name in dependencies)) outside.push(`${file}: ${name}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it("the test reads imports: a file that imports upwards is caught", () => {
    // The reader itself, on a made-up line: an upward import is found and resolved.
    const sample = join(SRC, "wire", "sample.ts");
    const specifier = relative(SRC, join(dirname(sample), "../http/server"));
    expect(roomOf(`${specifier}.ts`)).toBe("http");
    expect(ROOMS.wire?.mayImport).not.toContain("http");
  });

  it("the test finds cycles: a made-up graph a → b → c → a is reported once", () => {
    const graph = new Map([
      ["a.ts", ["b.ts"]],
      ["b.ts", ["c.ts"]],
      ["c.ts", ["a.ts", "d.ts"]],
      ["d.ts", []],
    ]);
    expect(cyclesOf(graph)).toEqual(["a.ts → b.ts → c.ts → a.ts"]);
  });
});

/** Each file's imports (relative ones, as paths under src/). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  return new Map(files.map((file) => [file, importsOf(join(SRC, file))]));
}

/** The cycles of a graph, each once, as "a → b → a" (a depth-first search that keeps its path). */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const cycles: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (node: string): void => {
    const at = path.indexOf(node);
    if (at >= 0) {
      cycles.push([...path.slice(at), node].join(" → "));
      return;
    }
    if (done.has(node)) return;
    path.push(node);
    for (const next of graph.get(node) ?? []) visit(next);
    path.pop();
    done.add(node);
  };
  for (const node of graph.keys()) visit(node);
  return cycles;
}

/** The packages a file imports (static and dynamic), by name: `@scope/name` or `name`, or `node:x`. */
function packagesOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^".][^"]*)"/gms),
    ...text.matchAll(/import\(\s*"([^".][^"]*)"\s*\)/g),
  ].map((m) => m[1] as string);
  return specifiers.map((s) =>
    s.startsWith("node:")
      ? s
      : s
          .split("/")
          .slice(0, s.startsWith("@") ? 2 : 1)
          .join("/"),
  );
}
