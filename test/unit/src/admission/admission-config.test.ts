import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionError, readAdmissionConfiguration } from '../../../../src/admission';

describe('--admission-control-config-file (AdmissionConfiguration, apiserver.config.k8s.io)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-admission-config-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function file(name: string, text: string): string {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  }

  function refusal(path: string): string {
    try {
      readAdmissionConfiguration(path, ['PodNodeSelector']);
    } catch (err) {
      expect(err).to.be.instanceOf(AdmissionError);
      return (err as Error).message;
    }
    return expect.fail('expected the file to be refused');
  }

  it('gives each plugin its inline configuration (as JSON) or its file, relative to the configuration file', () => {
    file('erl.yaml', 'apiVersion: eventratelimit.admission.k8s.io/v1alpha1\nkind: Configuration\nlimits: [{type: Server, qps: 1, burst: 1}]\n');
    const path = file('admission.yaml', [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: PodSecurity',
      '  configuration:',
      '    apiVersion: pod-security.admission.config.k8s.io/v1',
      '    kind: PodSecurityConfiguration',
      '    defaults: {enforce: baseline}',
      '- name: EventRateLimit',
      '  path: erl.yaml',
    ].join('\n'));
    const configs = readAdmissionConfiguration(path, []);
    const podSecurity = configs.configFor('PodSecurity');
    expect(JSON.parse(podSecurity?.text ?? '')).to.deep.equal({ apiVersion: 'pod-security.admission.config.k8s.io/v1', kind: 'PodSecurityConfiguration', defaults: { enforce: 'baseline' } });
    expect(configs.configFor('EventRateLimit')?.path).to.equal(join(dir, 'erl.yaml'));
    expect(configs.configFor('EventRateLimit')?.object?.kind).to.equal('Configuration');
    expect(configs.configFor('Priority')).to.equal(undefined);
  });

  it('accepts v1alpha1 and no file at all', () => {
    const path = file('alpha.yaml', 'apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: AdmissionConfiguration\nplugins: []\n');
    expect(readAdmissionConfiguration(path, []).configFor('X')).to.equal(undefined);
    expect(readAdmissionConfiguration('', []).configFor('X')).to.equal(undefined);
  });

  it('reads a legacy unversioned podNodeSelectorPluginConfig file as PodNodeSelector\'s configuration', () => {
    const path = file('legacy.yaml', 'podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n');
    const configs = readAdmissionConfiguration(path, ['PodNodeSelector']);
    expect(configs.configFor('PodNodeSelector')?.object).to.deep.equal({ podNodeSelectorPluginConfig: { clusterDefaultNodeSelector: 'env=prod' } });
    expect(configs.configFor('EventRateLimit')).to.equal(undefined);
  });

  it('refuses a missing file, another kind, and a file without kind with kube-apiserver\'s messages', () => {
    expect(refusal(join(dir, 'absent.yaml'))).to.match(/^unable to read admission control configuration from ".*absent\.yaml" \[ENOENT/);
    expect(refusal(file('kind.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: Foo\n'))).to.equal('no kind "Foo" is registered for version "apiserver.config.k8s.io/v1" in scheme "pkg/admission/config.go"');
    expect(refusal(file('nokind.yaml', 'plugins: []\n'))).to.equal(`Object 'apiVersion' is missing in '{"plugins":[]}'`);
    expect(refusal(file('badpath.yaml', 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: X\n  path: nowhere.yaml\n'))).to.match(/^couldn't open admission plugin configuration .*nowhere\.yaml/);
  });
});
