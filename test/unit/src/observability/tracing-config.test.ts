/**
 * --tracing-config-file: decoding, v1.25's defaults (endpoint localhost:4317, rate 0) and
 * validation (rate within 0..1,000,000, endpoint a gRPC target with a supported scheme), and
 * the OTLP/HTTP URL Carina derives from the endpoint.
 */
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isObservabilityError } from '../../../../src/observability/errors';
import { parseTracingConfiguration, readTracingConfiguration } from '../../../../src/observability/tracing-config';

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: TracingConfiguration\n';

function failure(text: string): { code: string; message: string } {
  try {
    parseTracingConfiguration(text);
  } catch (err) {
    if (!isObservabilityError(err)) throw err;
    return { code: err.code, message: err.message };
  }
  throw new Error('expected the configuration to be refused');
}

describe('tracing configuration', () => {
  it('takes v1.25\'s defaults: endpoint localhost:4317, sampling 0 per million', () => {
    const config = parseTracingConfiguration(HEAD);
    expect(config).to.deep.equal({ endpoint: 'localhost:4317', exportUrl: 'http://localhost:4317/v1/traces', samplingRatePerMillion: 0 });
  });

  it('reads endpoint and samplingRatePerMillion (YAML or JSON)', () => {
    expect(parseTracingConfiguration(`${HEAD}endpoint: 127.0.0.1:4318\nsamplingRatePerMillion: 250000\n`))
      .to.deep.equal({ endpoint: '127.0.0.1:4318', exportUrl: 'http://127.0.0.1:4318/v1/traces', samplingRatePerMillion: 250000 });
    const json = JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1alpha1', kind: 'TracingConfiguration', endpoint: 'dns:///collector.example:4318', samplingRatePerMillion: 1000000 });
    expect(parseTracingConfiguration(json).exportUrl).to.equal('http://collector.example:4318/v1/traces');
    expect(parseTracingConfiguration(`${HEAD}endpoint: "[::1]:4318"\n`).exportUrl).to.equal('http://[::1]:4318/v1/traces');
  });

  it('refuses a rate below 0 or above one million with v1.25\'s messages', () => {
    expect(failure(`${HEAD}samplingRatePerMillion: -1\n`)).to.deep.equal({ code: 'TRACING_CONFIG_INVALID', message: 'invalid tracing configuration: samplingRatePerMillion: Invalid value: -1: sampling rate must be positive' });
    expect(failure(`${HEAD}samplingRatePerMillion: 1000001\n`).message).to.contain('sampling rate per million must be less than or equal to one million');
    expect(failure(`${HEAD}samplingRatePerMillion: 0.5\n`).code).to.equal('TRACING_CONFIG_DECODE');
  });

  it('refuses an endpoint whose scheme gRPC does not resolve, listing every failure at once', () => {
    const both = failure(`${HEAD}endpoint: http://collector:4318\nsamplingRatePerMillion: -5\n`);
    expect(both.code).to.equal('TRACING_CONFIG_INVALID');
    expect(both.message).to.contain('sampling rate must be positive');
    expect(both.message).to.contain('endpoint: Invalid value: "http://collector:4318": unsupported scheme: http');
    expect(failure(`${HEAD}endpoint: unix:///run/otel.sock\n`).message).to.contain('cannot dial unix sockets');
    expect(failure(`${HEAD}endpoint: no-port\n`).message).to.contain('expected host:port');
  });

  it('refuses another kind or version, unknown fields, and what is not a mapping', () => {
    expect(failure('apiVersion: apiserver.config.k8s.io/v1\nkind: TracingConfiguration\n').message).to.contain('no kind "TracingConfiguration" is registered for version "apiserver.config.k8s.io/v1"');
    expect(failure('kind: TracingConfiguration\n').message).to.contain("'apiVersion' is missing");
    expect(failure(`${HEAD}endpoints: x:1\n`).message).to.contain('unknown field "endpoints"');
    expect(failure('- a\n- b\n').code).to.equal('TRACING_CONFIG_DECODE');
    expect(failure('a: [').code).to.equal('TRACING_CONFIG_DECODE');
  });

  describe('from a file', () => {
    let dir = '';
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'carina-tracing-config-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('reads the file, and names a file it cannot read', () => {
      const path = join(dir, 'tracing.yaml');
      writeFileSync(path, `${HEAD}samplingRatePerMillion: 7\n`);
      expect(readTracingConfiguration(path).samplingRatePerMillion).to.equal(7);
      try {
        readTracingConfiguration(join(dir, 'missing.yaml'));
        expect.fail('a missing file was read');
      } catch (err) {
        expect(isObservabilityError(err, 'TRACING_CONFIG_READ')).to.equal(true);
        expect((err as Error).message).to.contain('missing.yaml');
      }
    });
  });
});
