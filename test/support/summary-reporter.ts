/**
 * Ends a test run with the plain line `N passed, N failed, N skipped` that CI
 * reads, preceded by one line per reason tests were skipped for (a test that
 * skips itself with `ctx.skip(reason)`), so that no skip passes silently.
 */
import type { Reporter, TestModule } from "vitest/node";

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const counts = { passed: 0, failed: 0, skipped: 0 };
    const reasons = new Map<string, number>();
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const result = test.result();
        if (result.state === "passed") counts.passed++;
        else if (result.state === "failed") counts.failed++;
        else {
          counts.skipped++;
          if (result.state === "skipped" && result.note) {
            const key = `${module.moduleId.replace(/^.*\/test\//, "test/")}: ${result.note}`;
            reasons.set(key, (reasons.get(key) ?? 0) + 1);
          }
        }
      }
      if (module.state() === "failed" && module.children.size === 0) counts.failed++;
    }
    let out = "\n";
    for (const [reason, n] of reasons) out += `SKIPPED ${n} (${reason})\n`;
    process.stdout.write(
      `${out}${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped\n`,
    );
  }
}
