/**
 * Mocha reporter: the spec reporter's output, then one plain closing line
 * "N passed, M failed" that CI reads for its counts.
 */
import Mocha from 'mocha';

class SummaryReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const stats = runner.stats;
      const passed = stats?.passes ?? 0;
      const failed = stats?.failures ?? 0;
      // After the spec reporter's epilogue, so it is the last line printed.
      process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
    });
  }
}

export = SummaryReporter;
