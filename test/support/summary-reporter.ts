/**
 * Ends a test run with the plain line `N passed, N failed, N skipped` that CI
 * reads, preceded by one line per reason tests were skipped for (a test that
 * skips itself with `ctx.skip(reason)`), so that no skip passes silently.
 *
 * Failures count failed tests and every error outside a test: a file that
 * did not load, a hook (beforeAll, afterAll: the leak check among them) that
 * threw, an unhandled error. Tests a failed hook kept from running are not
 * "skipped": their hook's error is counted as a failure, and they are listed
 * apart as not run.
 */
import { relative } from "node:path";
import type { Reporter, SerializedError, TestModule, TestSuite } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    modules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError> = [],
  ): void {
    const counts = { passed: 0, failed: unhandledErrors.length, skipped: 0, notRun: 0 };
    const reasons = new Map<string, number>();
    for (const module of modules) {
      const name = relative(process.cwd(), module.moduleId);
      const suites: (TestModule | TestSuite)[] = [module, ...module.children.allSuites()];
      const outsideTests = suites.reduce((n, suite) => n + suite.errors().length, 0);
      counts.failed += outsideTests;
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") counts.passed++;
        else if (result.state === "failed") {
          counts.failed++;
          failedTests++;
        } else if (result.state === "skipped" && result.note) {
          counts.skipped++;
          const key = `${name}: ${result.note}`;
          reasons.set(key, (reasons.get(key) ?? 0) + 1);
        } else if (outsideTests > 0) {
          counts.notRun++;
        } else {
          counts.skipped++;
        }
      }
      // A module that failed with no error reported anywhere still failed.
      if (module.state() === "failed" && outsideTests === 0 && failedTests === 0) counts.failed++;
    }
    let out = "\n";
    for (const [reason, n] of reasons) out += `SKIPPED ${n} (${reason})\n`;
    if (counts.notRun > 0) out += `NOT RUN ${counts.notRun} (a hook or the file failed first)\n`;
    process.stdout.write(
      `${out}${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
