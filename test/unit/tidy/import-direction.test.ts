/**
 * The dependency rules of the module map, checked on the sources: raft/ knows nothing of src/
 * or test/; src/ reaches raft/ only through raft/index.ts; production code never imports the
 * test framework or test helpers.
 */
import { expect } from 'chai';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(__dirname, '..', '..', '..', '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'"]*?from\s+'([^']+)'/g)].map((m) => m[1]);
}

/** The repository-relative path an import points at, or the package name. */
function target(file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  return relative(ROOT, resolve(dirname(file), spec));
}

describe('tidy: import direction', () => {
  it('raft/ imports nothing from src/ or test/', () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, 'raft'))) {
      for (const spec of imports(file)) {
        const to = target(file, spec);
        if (to.startsWith('src') || to.startsWith('test')) offenders.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it('src/ reaches raft/ only through raft/index.ts', () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      for (const spec of imports(file)) {
        const to = target(file, spec);
        if (to.startsWith('raft') && to !== 'raft' && to !== 'raft/index') offenders.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it('production code never imports mocha, chai or test/', () => {
    const offenders: string[] = [];
    for (const file of [...sources(join(ROOT, 'src')), ...sources(join(ROOT, 'raft'))]) {
      if (relative(ROOT, file).startsWith('raft/testing')) continue;
      for (const spec of imports(file)) {
        const to = target(file, spec);
        if (to === 'mocha' || to === 'chai' || to.startsWith('test')) offenders.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});

/** The src/ folder an import from `file` reaches, or undefined outside src/. */
function srcFolderOf(path: string): string | undefined {
  const parts = path.split('/');
  return parts[0] === 'src' && parts.length > 2 ? parts[1] : undefined;
}

describe('tidy: the request line (ARCHITECTURE.md, "Import rules")', () => {
  it('filters never import the registry or the storage', () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, 'src', 'http', 'filters'))) {
      for (const spec of imports(file)) {
        const to = target(file, spec);
        if (to.startsWith('src/registry') || to.startsWith('src/storage')) offenders.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it('storage never imports http, endpoints or the registry', () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, 'src', 'storage'))) {
      for (const spec of imports(file)) {
        const folder = srcFolderOf(target(file, spec));
        if (folder === 'http' || folder === 'endpoints' || folder === 'registry') offenders.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it('endpoints never import http (the chain sits above the handlers)', () => {
    const offenders: string[] = [];
    for (const file of sources(join(ROOT, 'src', 'endpoints'))) {
      for (const spec of imports(file)) {
        if (srcFolderOf(target(file, spec)) === 'http') offenders.push(`${relative(ROOT, file)} -> ${spec}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it('every folder of the request line has an index.ts', () => {
    for (const folder of ['http', 'http/filters', 'endpoints', 'endpoints/handlers', 'registry', 'registry/strategies', 'storage', 'admission']) {
      expect(statSync(join(ROOT, 'src', folder, 'index.ts')).isFile(), folder).to.equal(true);
    }
  });
});
