/**
 * Mocha reporter: the spec reporter's output, then one plain closing line
 * "N passed, M failed, K skipped" that CI reads for its counts. Tests that never ran because a
 * hook before them failed are counted as skipped and listed, and make the run fail even if the
 * hook failure itself were not counted, so that no test can silently drop out of a run.
 */
import Mocha from 'mocha';

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const finished = new Set<Mocha.Test>();
    let failedTests = 0;
    let pending = 0;
    const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_RUN_END } = Mocha.Runner.constants;
    runner.on(EVENT_TEST_PASS, (test: Mocha.Test) => finished.add(test));
    runner.on(EVENT_TEST_FAIL, (runnable: Mocha.Runnable) => {
      // A failed hook is reported through the same event; count real tests only here.
      if (runnable instanceof Mocha.Test) {
        finished.add(runnable);
        failedTests++;
      }
    });
    runner.on(EVENT_TEST_PENDING, (test: Mocha.Test) => {
      finished.add(test);
      pending++;
    });
    runner.once(EVENT_RUN_END, () => {
      const stats = runner.stats;
      const passed = stats?.passes ?? 0;
      // Mocha counts a failed hook as a failure: keep that, so the count matches its exit code.
      const failed = stats?.failures ?? failedTests;
      const notRun: string[] = [];
      const visit = (suite: Mocha.Suite) => {
        for (const test of suite.tests) if (!finished.has(test) && !test.isPending()) notRun.push(test.fullTitle());
        for (const child of suite.suites) visit(child);
      };
      visit(runner.suite);
      if (notRun.length > 0) {
        process.stdout.write(`\n${notRun.length} tests did not run (a hook before them failed):\n${notRun.map((t) => `  - ${t}`).join('\n')}\n`);
        process.exitCode = 1;
      }
      // After the spec reporter's epilogue, so it is the last line printed.
      process.stdout.write(`\n${passed} passed, ${failed} failed, ${pending + notRun.length} skipped\n`);
    });
  }
}

export = SummaryReporter;
