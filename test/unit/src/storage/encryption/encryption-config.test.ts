import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EncryptionError, loadEncryptionConfiguration, parseEncryptionConfiguration } from '../../../../../src/storage/encryption';

const HEAD = 'apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n';
const KEY32 = Buffer.alloc(32, 1).toString('base64');

function failure(text: string): string {
  try {
    parseEncryptionConfiguration(text, '/etc/carina/enc.yaml');
  } catch (err) {
    expect(err).to.be.instanceOf(EncryptionError);
    expect((err as EncryptionError).code).to.equal('INVALID_CONFIG');
    return (err as Error).message;
  }
  throw new Error('expected the configuration to be refused');
}

describe('src/storage/encryption EncryptionConfiguration: decoding and v1.25\'s validation messages', () => {
  it('accepts kube\'s documented example in YAML and in JSON', () => {
    const yaml = `${HEAD}resources:\n  - resources: [secrets, configmaps, deployments.apps]\n    providers:\n      - aescbc:\n          keys:\n            - name: key1\n              secret: ${KEY32}\n      - identity: {}\n`;
    const config = parseEncryptionConfiguration(yaml, 'enc.yaml');
    expect(config.resources[0].resources).to.deep.equal(['secrets', 'configmaps', 'deployments.apps']);
    expect(config.resources[0].providers.map((p) => Object.keys(p))).to.deep.equal([['aescbc'], ['identity']]);
    const json = JSON.stringify({ apiVersion: 'apiserver.config.k8s.io/v1', kind: 'EncryptionConfiguration', resources: [{ resources: ['secrets'], providers: [{ secretbox: { keys: [{ name: 'k', secret: KEY32 }] } }] }] });
    expect(parseEncryptionConfiguration(json, 'enc.json').resources[0].providers[0].secretbox?.keys?.[0].name).to.equal('k');
  });

  it('refuses an empty file, an unknown kind and a missing kind', () => {
    expect(failure('')).to.equal('error while parsing file: encryption provider configuration file "/etc/carina/enc.yaml" is empty');
    expect(failure('apiVersion: v1\nkind: ConfigMap\n')).to.equal('error while parsing file: error decoding encryption provider configuration file "/etc/carina/enc.yaml": no kind "ConfigMap" is registered for version "v1"');
    expect(failure('resources: []\n')).to.contain('Object \'Kind\' is missing');
  });

  it('gives kube\'s field errors: no resources, no providers, key length, base64, names, two providers in one element', () => {
    expect(failure(`${HEAD}resources: []\n`)).to.equal('error while parsing file: resources: Required value: at least one resources is required');
    expect(failure(`${HEAD}resources:\n  - resources: []\n    providers: []\n`)).to.equal(
      'error while parsing file: [resources[0].resources: Required value: at least one resources[0].resources is required, resources[0].providers: Required value: at least one resources[0].providers is required]',
    );
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - aescbc:\n          keys:\n            - name: k\n              secret: ${Buffer.alloc(8).toString('base64')}\n`)).to.equal(
      'error while parsing file: resources[0].providers[0].aescbc.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 8, expected one of [16 24 32]',
    );
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - secretbox:\n          keys:\n            - name: k\n              secret: ${Buffer.alloc(16).toString('base64')}\n`)).to.equal(
      'error while parsing file: resources[0].providers[0].secretbox.keys[0].secret: Invalid value: "REDACTED": secret is not of the expected length, got 16, expected one of [32]',
    );
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys:\n            - name: k\n              secret: not*base64\n`)).to.equal(
      'error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: "REDACTED": secrets must be base64 encoded',
    );
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys:\n            - secret: ${KEY32}\n`)).to.equal(
      'error while parsing file: resources[0].providers[0].aesgcm.keys[0].name: Required value: name is a mandatory field for a key',
    );
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys: []\n`)).to.equal(
      'error while parsing file: resources[0].providers[0].aesgcm.keys: Required value: at least one keys is required',
    );
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - identity: {}\n        aescbc:\n          keys:\n            - name: k\n              secret: ${KEY32}\n`)).to.contain(
      'resources[0].providers[0]: Invalid value: {aescbc, identity}: more than one provider specified in a single element, should split into different list elements',
    );
  });

  it('never puts a key in a message', () => {
    const secret = Buffer.alloc(7, 0x41).toString('base64');
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - aescbc:\n          keys:\n            - name: k\n              secret: ${secret}\n`)).not.to.contain(secret);
  });

  it('loads a file, and says which file cannot be opened', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'carina-enc-'));
    try {
      const file = join(dir, 'enc.yaml');
      writeFileSync(file, `${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - aesgcm:\n          keys:\n            - name: k\n              secret: ${KEY32}\n`);
      const transformers = await loadEncryptionConfiguration(file);
      expect([...transformers.keys()]).to.deep.equal(['secrets']);
      let message = '';
      await loadEncryptionConfiguration(join(dir, 'missing.yaml')).catch((err: Error) => {
        message = err.message;
      });
      expect(message).to.contain(`error opening encryption provider configuration file "${join(dir, 'missing.yaml')}"`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('validates a kms provider as kube does, then refuses to build it (no KMS plugin client)', () => {
    expect(failure(`${HEAD}resources:\n  - resources: [secrets]\n    providers:\n      - kms:\n          name: k\n          endpoint: https://kms.example\n`)).to.contain('unsupported scheme "https" for KMS provider, only unix is supported');
  });
});
