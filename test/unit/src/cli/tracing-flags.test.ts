/** --tracing-config-file: absent means no tracing; a bad file is a flag error naming the problem. */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FlagError, parseFlags } from '../../../../src/cli/flags';
import { TRACING_FLAGS, tracingFromFlags } from '../../../../src/cli/tracing-flags';

describe('tracing flags', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-tracing-flags-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('without --tracing-config-file, configures nothing', () => {
    expect(tracingFromFlags(parseFlags([], TRACING_FLAGS))).to.equal(undefined);
  });

  it('reads the file the flag names', () => {
    const path = join(dir, 'ok.yaml');
    writeFileSync(path, 'apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nendpoint: 127.0.0.1:4318\nsamplingRatePerMillion: 100\n');
    expect(tracingFromFlags(parseFlags(['--tracing-config-file', path], TRACING_FLAGS))?.samplingRatePerMillion).to.equal(100);
  });

  it('turns a bad file into a flag error', () => {
    const path = join(dir, 'bad.yaml');
    writeFileSync(path, 'apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\nsamplingRatePerMillion: 2000000\n');
    expect(() => tracingFromFlags(parseFlags(['--tracing-config-file', path], TRACING_FLAGS))).to.throw(FlagError, '--tracing-config-file: invalid tracing configuration: samplingRatePerMillion');
  });
});
