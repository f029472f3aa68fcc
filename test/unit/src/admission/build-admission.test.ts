import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdmissionError, AdmissionPluginRegistry, buildAdmission, registerBuiltinPlugins, type AdmissionPlugin } from '../../../../src/admission';
import { admissionPluginRegistry } from '../../../../src/server/server-admission';
import { registerInertWebhookPlugins, testDeps } from './plugin-harness';

function registry(): AdmissionPluginRegistry {
  const plugins = new AdmissionPluginRegistry();
  registerBuiltinPlugins(plugins);
  registerInertWebhookPlugins(plugins);
  return plugins;
}

describe('buildAdmission', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'carina-build-admission-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('puts the always-on steps first, then the enabled plugins in v1.25 order', async () => {
    const internal: AdmissionPlugin = { name: 'rbac-escalation', sideEffects: 'None', handles: () => false };
    const built = await buildAdmission({ enablePlugins: ['AlwaysPullImages'], disablePlugins: ['PodSecurity'], configFile: '' }, registry(), testDeps(), [internal]);
    expect(built.chain.pluginNames[0]).to.equal('rbac-escalation');
    expect(built.chain.pluginNames.slice(1)).to.deep.equal([...built.enabled]);
    expect(built.enabled).to.include('AlwaysPullImages').and.not.include('PodSecurity');
  });

  it('gives a plugin its configuration from the file, and stops the start with kube\'s message when it is wrong', async () => {
    const config = join(dir, 'admission.yaml');
    writeFileSync(config, 'apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: EventRateLimit\n  configuration:\n    apiVersion: eventratelimit.admission.k8s.io/v1alpha1\n    kind: Configuration\n    limits: [{type: Server, qps: 0, burst: 5}]\n');
    try {
      await buildAdmission({ enablePlugins: ['EventRateLimit'], disablePlugins: [], configFile: config }, registry(), testDeps());
      expect.fail('expected the start to be refused');
    } catch (err) {
      expect(err).to.be.instanceOf(AdmissionError);
      expect((err as Error).message).to.equal('couldn\'t init admission plugin "EventRateLimit": limits[0].qps: Invalid value: 0: must be positive');
    }
  });

  it('makes the webhook plugins with the server\'s wiring, asked only when one is enabled', async () => {
    let asked = 0;
    const plugins = admissionPluginRegistry(() => {
      asked++;
      throw new Error('no server here');
    });
    const withoutWebhooks = await buildAdmission({ enablePlugins: [], disablePlugins: ['MutatingAdmissionWebhook', 'ValidatingAdmissionWebhook'], configFile: '' }, plugins, testDeps());
    expect(withoutWebhooks.enabled).to.not.include('MutatingAdmissionWebhook');
    expect(asked).to.equal(0);
    try {
      await buildAdmission({ enablePlugins: [], disablePlugins: [], configFile: '' }, plugins, testDeps());
      expect.fail('expected the webhook plugin to ask for its wiring');
    } catch (err) {
      expect((err as Error).message).to.equal('couldn\'t init admission plugin "MutatingAdmissionWebhook": no server here');
    }
    expect(asked).to.equal(1);
  });
});
