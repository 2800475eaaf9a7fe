/**
 * The start refuses a Node older than package.json's engines, by name, before
 * anything else: an older one fails later and obscurely (Node 20 ignores
 * reusePort, and the service reported its port in use).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MIN_NODE_VERSION, nodeVersionProblem } from "../../src/version";

describe("the Node the service runs on", () => {
  it("is package.json's engines.node", () => {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
    expect(pkg.engines.node).toBe(`>=${MIN_NODE_VERSION.replace(/\.0$/, "")}`);
  });

  it.each(["24.11.0", "24.21.0", "25.0.0", "30.1.2"])("%s runs it", (version) => {
    expect(nodeVersionProblem(version)).toBeUndefined();
  });

  it.each(["20.20.2", "22.12.0", "24.10.9", "24.0.0", "18.19.1"])(
    "%s is refused, naming both versions and the way to run it",
    (version) => {
      const problem = nodeVersionProblem(version);
      expect(problem).toContain(`Node ${version}`);
      expect(problem).toContain(MIN_NODE_VERSION);
      expect(problem).toContain("npm start");
    },
  );

  it("the Node running these tests is one that runs it", () => {
    expect(nodeVersionProblem(process.versions.node)).toBeUndefined();
  });
});
