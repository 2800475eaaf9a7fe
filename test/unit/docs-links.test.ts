/**
 * The README and docs/ describe the service in the repository's own words:
 * every link between them resolves (file and heading), none leaves the
 * repository, and nothing points at documents a clone does not have.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../", import.meta.url).pathname;
const PAGES = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

const withoutCode = (text: string) =>
  text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");

/** GitHub's heading anchors: lower case, letters, digits, spaces as "-", "-1" for repeats. */
function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), "utf8").replace(/^```[\s\S]*?^```/gm, "");
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.*)$/gm)) {
    const slug = (heading as string)
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe("the documentation's links", () => {
  it("there is a page for each reader's question, each linked from the README", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    for (const page of PAGES.filter((p) => p !== "README.md")) {
      expect(readme, page).toContain(`](${page})`);
    }
    for (const page of [
      "api",
      "configuration",
      "operations",
      "observability",
      "clients",
      "architecture",
      "performance",
      "decisions",
      "development",
      "testing",
    ]) {
      expect(PAGES).toContain(`docs/${page}.md`);
    }
  });

  it("the README is a front page: about 150 lines, the two commands first", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(180);
    const firstScreen = readme.split("\n").slice(0, 8).join("\n");
    expect(firstScreen).toContain("npm ci && npm start");
    expect(firstScreen).toContain("npm test");
  });

  it("every alert's runbook_url names a section of docs/runbook.md", () => {
    const rules = readFileSync(join(ROOT, "deploy/prometheus/docflow-api.rules.yml"), "utf8");
    const alerts = [...rules.matchAll(/^\s*- alert: (\w+)$/gm)].map(([, name]) => name as string);
    const urls = [...rules.matchAll(/runbook_url: "([^"]+)"/g)].map(([, url]) => url as string);
    expect(alerts.length).toBeGreaterThan(0);
    expect(urls).toEqual(alerts.map((a) => `docs/runbook.md#${a.toLowerCase()}`));
    const sections = anchorsOf("docs/runbook.md");
    for (const alert of alerts) expect(sections, alert).toContain(alert.toLowerCase());
  });

  it.each(PAGES)("%s: every link resolves inside the repository", (page) => {
    const raw = readFileSync(join(ROOT, page), "utf8");
    expect(raw).not.toContain("../shared");
    expect(raw).not.toMatch(/\bSPEC\.md\b|TOOLCHAIN\.md/);
    const body = withoutCode(raw);
    const problems: string[] = [];
    for (const [, target] of body.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
      const link = target as string;
      if (/^[a-z]+:/.test(link)) {
        problems.push(`${link}: leaves the repository`);
        continue;
      }
      const [path = "", fragment] = link.split("#");
      const file = path === "" ? page : normalize(join(dirname(page), path));
      if (file.startsWith("..")) {
        problems.push(`${link}: leaves the repository`);
      } else if (!existsSync(join(ROOT, file))) {
        problems.push(`${link}: no such file ${file}`);
      } else if (fragment && file.endsWith(".md") && !anchorsOf(file).has(fragment)) {
        problems.push(`${link}: no heading #${fragment} in ${file}`);
      }
    }
    expect(problems).toEqual([]);
  });
});
