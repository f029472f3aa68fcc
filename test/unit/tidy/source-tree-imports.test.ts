/**
 * The import rules of ARCHITECTURE.md ("Layers", "Layer order"), checked on the real src/ and
 * raft/ by the checker that test/unit/tidy/import-rules.test.ts proves on a fixture tree: each
 * rule is its own test, and a failure lists every offending import.
 */
import { expect } from 'chai';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { checkImportRules, folderOf, importEdges, layerOrderFrom, type ImportRule, type ImportViolation } from '../../support/import-rules';

const ROOT = resolve(__dirname, '..', '..', '..', '..');

describe('tidy: the source tree keeps the import rules of ARCHITECTURE.md', () => {
  const layers = layerOrderFrom(readFileSync(join(ROOT, 'ARCHITECTURE.md'), 'utf8'));
  let violations: ImportViolation[];
  before(() => {
    violations = checkImportRules({ root: ROOT, layers, testCodeFolders: ['raft/testing'] });
  });
  const broken = (rule: ImportRule) => violations.filter((v) => v.rule === rule).map((v) => v.detail);

  it('the layer order names every folder of src/ and raft/ once', () => {
    const named = layers.flat();
    expect(new Set(named).size, 'a folder named twice').to.equal(named.length);
    const folders = [...new Set(importEdges(ROOT, ['src', 'raft']).map((edge) => folderOf(edge.from)))].sort();
    expect(folders.filter((folder) => !named.includes(folder))).to.deep.equal([]);
    expect(named.filter((folder) => !folders.includes(folder))).to.deep.equal([]);
  });

  for (const rule of ['folder-cycle', 'layer-order', 'index-surface', 'core-purity', 'raft-alone', 'raft-through-index', 'no-test-code'] as const) {
    it(`${rule}: no import breaks it`, () => {
      expect(broken(rule)).to.deep.equal([]);
    });
  }

  it('the filters never import the registry or the storage', () => {
    const offenders = importEdges(ROOT, ['src/http/filters'])
      .filter((edge) => edge.to.startsWith('src/registry') || edge.to.startsWith('src/storage'))
      .map((edge) => `${edge.from} -> ${edge.spec}`);
    expect(offenders).to.deep.equal([]);
  });

  it('the endpoints never import the storage: reads, writes and watches go through the registry', () => {
    const offenders = importEdges(ROOT, ['src/endpoints'])
      .filter((edge) => edge.to.startsWith('src/storage'))
      .map((edge) => `${edge.from} -> ${edge.spec}`);
    expect(offenders).to.deep.equal([]);
  });

  it('every folder of the request line has an index.ts', () => {
    for (const folder of ['http', 'http/filters', 'endpoints', 'endpoints/handlers', 'registry', 'registry/strategies', 'storage', 'admission']) {
      expect(existsSync(join(ROOT, 'src', folder, 'index.ts')), folder).to.equal(true);
    }
  });
});
