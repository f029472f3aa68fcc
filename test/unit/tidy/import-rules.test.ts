/**
 * The import-rule checker (test/support/import-rules.ts) proves itself on a small tree written
 * here: a clean tree passes, and each rule fails on a tree that breaks it once, with static and
 * dynamic imports of either quote, `export ... from`, and folder imports through index.ts.
 */
import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkImportRules, importSpecifiers, layerOrderFrom, type ImportRule } from '../../support/import-rules';

const LAYERS = [['src/cli'], ['src/http'], ['src/endpoints'], ['src/registry'], ['src/storage'], ['raft'], ['raft/kv'], ['raft/core']];

/** A tree that keeps every rule: http -> endpoints -> registry -> storage -> raft, each through its index. */
const CLEAN: Record<string, string> = {
  'src/http/index.ts': "export { serve } from './server';\n",
  'src/http/server.ts': "import { handle } from \"../endpoints\";\nexport const serve = () => handle();\n",
  'src/endpoints/index.ts': "export * from './handlers/get';\n",
  'src/endpoints/handlers/get.ts': "import type { Registry } from '../../registry';\nexport const handle = (r?: Registry) => r;\n",
  'src/registry/index.ts': "export type Registry = { get(): Promise<unknown> };\nexport async function load() { return import('../storage'); }\n",
  'src/storage/index.ts': "import { client } from '../../raft';\nexport const store = client;\n",
  'raft/index.ts': "export { client } from './kv';\n",
  'raft/kv/index.ts': "import { step } from '../core';\nexport const client = step;\n",
  'raft/core/index.ts': "export function step(n: number): number { return n + 1; }\n",
};

function writeTree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'carina-tidy-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, dirname(path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

function rulesBroken(changes: Record<string, string>): ImportRule[] {
  const root = writeTree({ ...CLEAN, ...changes });
  try {
    return checkImportRules({ root, layers: LAYERS }).map((v) => v.rule);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('tidy: the import-rule checker on a tree that breaks each rule once', () => {
  it('reads static and dynamic imports, exports, require and both quotes', () => {
    expect(importSpecifiers("import a from './a';\nimport \"./b\";\nexport * from \"./c\";\nconst d = await import('./d');\nconst e = require('./e');\n")).to.deep.equal(['./a', './b', './c', './d', './e']);
  });

  it('passes the clean tree', () => {
    const root = writeTree(CLEAN);
    try {
      expect(checkImportRules({ root, layers: LAYERS })).to.deep.equal([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('folder-cycle: storage importing the registry back (through its index, in double quotes)', () => {
    expect(rulesBroken({ 'src/storage/index.ts': "import { client } from '../../raft';\nimport type { Registry } from \"../registry\";\nexport const store = client;\nexport type R = Registry;\n" }))
      .to.have.members(['folder-cycle', 'layer-order']);
  });

  it('layer-order: a lower folder reaching up through a dynamic import, even without a cycle', () => {
    expect(rulesBroken({ 'src/storage/index.ts': "import { client } from '../../raft';\nexport const store = client;\nexport const later = () => import('../cli');\n", 'src/cli/index.ts': 'export const main = 1;\n' }))
      .to.deep.equal(['layer-order']);
  });

  it('layer-order: a folder in no layer', () => {
    expect(rulesBroken({ 'src/registry/index.ts': "import { x } from '../chaos';\nexport type Registry = { get(): Promise<unknown> };\nexport const y = x;\n", 'src/chaos/index.ts': 'export const x = 1;\n' }))
      .to.deep.equal(['layer-order']);
  });

  it('index-surface: an import of another folder\'s insides when it has an index.ts', () => {
    expect(rulesBroken({ 'src/http/server.ts': "import { handle } from '../endpoints/handlers/get';\nexport const serve = () => handle();\n" }))
      .to.deep.equal(['index-surface']);
  });

  it('core-purity: raft/core importing a node module, another folder, or reading the clock', () => {
    expect(rulesBroken({ 'raft/core/index.ts': "import { readFileSync } from 'node:fs';\nexport function step(n: number): number { return n + readFileSync.length; }\n" })).to.deep.equal(['core-purity']);
    expect(rulesBroken({ 'raft/core/index.ts': "import { client } from '../kv';\nexport function step(n: number): number { return n; }\nexport const c = client;\n" }))
      .to.include('core-purity');
    expect(rulesBroken({ 'raft/core/index.ts': "// Date.now() in a comment is fine\nexport function step(n: number): number { return n + Date.now(); }\n" })).to.deep.equal(['core-purity']);
  });

  it('raft-alone and raft-through-index', () => {
    expect(rulesBroken({ 'raft/kv/index.ts': "import { step } from '../core';\nimport { store } from '../../src/storage';\nexport const client = step;\nexport const s = store;\n" }))
      .to.include('raft-alone');
    expect(rulesBroken({ 'src/storage/index.ts': "import { client } from '../../raft/kv';\nexport const store = client;\n" }))
      .to.deep.equal(['raft-through-index']);
  });

  it('no-test-code: production code importing chai or test/', () => {
    expect(rulesBroken({ 'src/registry/index.ts': "import { expect } from 'chai';\nexport type Registry = { get(): Promise<unknown> };\nexport const e = expect;\n" })).to.deep.equal(['no-test-code']);
  });

  it('reads the layer order from ARCHITECTURE.md\'s fenced block', () => {
    expect(layerOrderFrom('# A\n\n## Layer order\n\nText.\n\n```\nsrc/cli            # top\nsrc/server src/chaos\n\nraft/core\n```\n')).to.deep.equal([['src/cli'], ['src/server', 'src/chaos'], ['raft/core']]);
  });
});
