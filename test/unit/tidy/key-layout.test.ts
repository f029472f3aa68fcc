/**
 * The store's key layout is written once (src/apis/catalogue/key-layout.ts): no other file of src/
 * spells a `/registry/...` key in a string or template literal; each asks resourceKeyPrefix (or
 * KEYSPACE_ROOT) instead, so that a resource's storage, admission, authorization and the
 * controllers can never disagree on where a resource's objects are. Read with the TypeScript
 * parser, so comments never count.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { typescriptSources } from '../../support/typescript-sources';

const ROOT = resolve(__dirname, '..', '..', '..', '..');

/** The files that own a layout: kube's (the rule), the earlier build's (the migration), the allocator's ranges. */
const LAYOUT_OWNERS = new Set(['src/apis/catalogue/key-layout.ts', 'src/registry/key-layout-upgrade.ts', 'src/registry/service-allocator.ts']);


/** Every string or template-literal piece of `text` that starts a /registry/ key, with its line. */
function registryKeyLiterals(file: string, text: string): string[] {
  const found: string[] = [];
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const visit = (node: ts.Node): void => {
    let literal: string | undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literal = node.text;
    else if (ts.isTemplateExpression(node)) literal = node.head.text;
    if (literal?.startsWith('/registry/') === true) {
      found.push(`${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${JSON.stringify(literal)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('tidy: the store key layout lives in one place', () => {
  it('finds a key spelled in a string or a template, and not in a comment', () => {
    const text = "// '/registry/pods/' in a comment\nconst a = '/registry/secrets/';\nconst b = `/registry/configmaps/${ns}/`;\nconst c = '/api/v1';\n";
    expect(registryKeyLiterals(join(ROOT, 'src/x.ts'), text)).to.deep.equal(['src/x.ts:2 "/registry/secrets/"', 'src/x.ts:3 "/registry/configmaps/"']);
  });

  it('no file of src/ but the layouts\' owners spells a /registry/ key', () => {
    const offenders = typescriptSources(join(ROOT, 'src'))
      .filter((file) => !LAYOUT_OWNERS.has(relative(ROOT, file)))
      .flatMap((file) => {
        const text = readFileSync(file, 'utf8');
        return text.includes('/registry/') ? registryKeyLiterals(file, text) : [];
      });
    expect(offenders).to.deep.equal([]);
  });
});
