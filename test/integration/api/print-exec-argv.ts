// Preloaded by deploy-config.test.ts into `bin/carina --help`: tells which flags Node was started with.
process.stderr.write(`execArgv ${JSON.stringify(process.execArgv)}\n`);
