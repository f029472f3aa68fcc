/**
 * Issue 30's figures for raft/etcd, measured on the sources with the TypeScript parser: no class
 * there is longer than 350 lines (from its `class` line to its closing brace), and no class in
 * production code (raft/, src/) has a member whose name ends in ForTest (tests reach what they
 * need through constructor options, e.g. KvReplicaOptions.wrapStateMachine).
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { typescriptSources } from '../../../support/typescript-sources';

const ROOT = resolve(__dirname, '..', '..', '..', '..', '..');
const MAX_CLASS_LINES = 350;


interface ClassFacts {
  where: string;
  lines: number;
  members: string[];
}

function classesIn(file: string): ClassFacts[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: ClassFacts[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isClassDeclaration(node) || ts.isClassExpression(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({
        where: `${relative(ROOT, file)} ${node.name?.text ?? '(anonymous class)'}`,
        lines: last - first + 1,
        members: node.members.flatMap((m) => (m.name !== undefined && (ts.isIdentifier(m.name) || ts.isPrivateIdentifier(m.name)) ? [m.name.text] : [])),
      });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('raft/etcd: the size of its classes, and no test hooks in production code', () => {
  it(`has no class over ${MAX_CLASS_LINES} lines in raft/etcd`, () => {
    const classes = typescriptSources(join(ROOT, 'raft', 'etcd')).flatMap(classesIn);
    expect(classes.map((c) => c.where)).to.include('raft/etcd/kv-replica.ts KvReplica');
    const tooLong = classes.filter((c) => c.lines > MAX_CLASS_LINES).map((c) => `${c.where}: ${c.lines} lines`);
    expect(tooLong).to.deep.equal([]);
  });

  it('has no member named ...ForTest in a class of raft/ or src/', () => {
    // Only files that name a ForTest at all need parsing.
    const files = [...typescriptSources(join(ROOT, 'raft')), ...typescriptSources(join(ROOT, 'src'))].filter((f) => readFileSync(f, 'utf8').includes('ForTest'));
    const classes = files.flatMap(classesIn);
    const hooks = classes.flatMap((c) => c.members.filter((m) => /ForTest$/.test(m)).map((m) => `${c.where}.${m}`));
    expect(hooks).to.deep.equal([]);
  });
});
