/**
 * The one object model (ARCHITECTURE.md, src/apis/object): no other file of src/ defines the JSON
 * object type, a guard, a deep copy or a metadata reader of its own, and every import of the type
 * comes from src/apis/object. Read with the TypeScript parser, so comments and strings never count.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { typescriptSources } from '../../support/typescript-sources';

const ROOT = resolve(__dirname, '..', '..', '..', '..');
const MODULE = 'src/apis/object';

/** The names only src/apis/object may define, and the names its copies went by. */
const MODEL_FUNCTIONS = new Set([
  'metadataOf', 'ensureMetadata', 'isJsonObject', 'asJsonObject', 'objectOrEmpty', 'deepCopy',
  'isObject', 'isPlainObject', 'isRecord', 'deepClone', 'cloneJson',
]);
const MODEL_TYPES = new Set(['JsonObject', 'JsonValue']);


function parse(file: string, text = readFileSync(file, 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
}

/** Files that could hold a definition, found by text before the parser reads them (most cannot). */
const MAY_DEFINE = new RegExp(`\\b(${[...MODEL_FUNCTIONS, ...MODEL_TYPES].join('|')})\\b|Record<string,\\s*unknown>|\\]:\\s*unknown`);

/** `Record<string, unknown>` or `{ [key: string]: unknown }`: the object type spelled again. */
function isObjectShape(type: ts.TypeNode): boolean {
  if (ts.isTypeReferenceNode(type)) {
    const args = type.typeArguments ?? [];
    return type.typeName.getText() === 'Record' && args.length === 2 && args[0]?.kind === ts.SyntaxKind.StringKeyword && args[1]?.kind === ts.SyntaxKind.UnknownKeyword;
  }
  if (ts.isTypeLiteralNode(type) && type.members.length === 1) {
    const member = type.members[0];
    return member !== undefined && ts.isIndexSignatureDeclaration(member) && member.type.kind === ts.SyntaxKind.UnknownKeyword;
  }
  return false;
}

/** Definitions of the model's names or shape in `file`, as "path:line name". */
function definitionsIn(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (!MAY_DEFINE.test(text)) return [];
  const source = parse(file, text);
  const at = (node: ts.Node, name: string): string => `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1} ${name}`;
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isTypeAliasDeclaration(node) || ts.isInterfaceDeclaration(node)) && MODEL_TYPES.has(node.name.text)) found.push(at(node, node.name.text));
    else if (ts.isTypeAliasDeclaration(node) && isObjectShape(node.type)) found.push(at(node, `${node.name.text} (the object shape)`));
    else if (ts.isFunctionDeclaration(node) && node.name !== undefined && MODEL_FUNCTIONS.has(node.name.text)) found.push(at(node, node.name.text));
    else if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && MODEL_FUNCTIONS.has(node.name.text) && node.initializer !== undefined && ts.isArrowFunction(node.initializer)) found.push(at(node, node.name.text));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Repository-relative path a relative import of `file` points at. */
function target(file: string, spec: string): string {
  return spec.startsWith('.') ? relative(ROOT, resolve(dirname(file), spec)) : spec;
}

describe('tidy: one object model (src/apis/object)', () => {
  it('no file of src/ outside src/apis/object defines the JSON types, a guard, a deep copy or a metadata reader', () => {
    const offenders = typescriptSources(join(ROOT, 'src'))
      .filter((file) => !relative(ROOT, file).startsWith(`${MODULE}/`))
      .flatMap(definitionsIn);
    expect(offenders).to.deep.equal([]);
  });

  it('src/apis/object defines each of them once', () => {
    const names = typescriptSources(join(ROOT, MODULE)).flatMap(definitionsIn).map((entry) => entry.split(' ')[1]).sort();
    expect(names).to.deep.equal(['JsonObject', 'JsonValue', 'asJsonObject', 'deepCopy', 'ensureMetadata', 'isJsonObject', 'metadataOf', 'objectOrEmpty'].sort());
  });

  it('every import of JsonObject or JsonValue, in src/, test/ and bench/, comes from src/apis/object', () => {
    const offenders: string[] = [];
    for (const file of ['src', 'test', 'bench'].flatMap((dir) => typescriptSources(join(ROOT, dir)))) {
      const text = readFileSync(file, 'utf8');
      if (!/\bJson(Object|Value)\b/.test(text)) continue;
      for (const statement of parse(file, text).statements) {
        if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
        const specifier = statement.moduleSpecifier;
        if (specifier === undefined || !ts.isStringLiteral(specifier)) continue;
        const bindings = ts.isImportDeclaration(statement) ? statement.importClause?.namedBindings : statement.exportClause;
        if (bindings === undefined || ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings)) continue;
        const named = bindings.elements.map((element) => (element.propertyName ?? element.name).text);
        const to = target(file, specifier.text);
        if (named.some((name) => MODEL_TYPES.has(name)) && to !== MODULE && !to.startsWith(`${MODULE}/`)) offenders.push(`${relative(ROOT, file)} -> ${specifier.text}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });

  it('src/apis/object imports nothing from src/ but itself and src/util', () => {
    const offenders: string[] = [];
    for (const file of typescriptSources(join(ROOT, MODULE))) {
      for (const statement of parse(file).statements) {
        if (!ts.isImportDeclaration(statement) && !ts.isExportDeclaration(statement)) continue;
        const specifier = statement.moduleSpecifier;
        if (specifier === undefined || !ts.isStringLiteral(specifier)) continue;
        const to = target(file, specifier.text);
        if (to.startsWith('src/') && !to.startsWith(`${MODULE}/`) && !to.startsWith('src/util')) offenders.push(`${relative(ROOT, file)} -> ${specifier.text}`);
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});
