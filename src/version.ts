/** The service's version, from package.json. */
import { createRequire } from "node:module";

export const SERVICE_VERSION: string = (
  createRequire(import.meta.url)("../package.json") as { version: string }
).version;

/** package.json's `engines.node`: the oldest Node the service is built and tested on. */
export const MIN_NODE_VERSION = "24.11.0";

/**
 * Why `version` (a `process.versions.node`) cannot run the service, or undefined. An
 * older Node fails later and obscurely (Node 20 ignores `reusePort`, and the second
 * listening socket reports its port in use), so the start refuses it first, by name.
 */
export function nodeVersionProblem(version: string): string | undefined {
  const parts = (v: string) => v.split(".").map((n) => Number.parseInt(n, 10) || 0);
  const [major = 0, minor = 0, patch = 0] = parts(version);
  const [needMajor = 0, needMinor = 0, needPatch = 0] = parts(MIN_NODE_VERSION);
  const older =
    major !== needMajor
      ? major < needMajor
      : minor !== needMinor
        ? minor < needMinor
        : patch < needPatch;
  if (!older) return undefined;
  return `docflow-api needs Node ${MIN_NODE_VERSION} or later, and this is Node ${version}: run it with npm start (npm ci installs the project's Node into node_modules/.bin, and npm scripts put it first on PATH)`;
}
