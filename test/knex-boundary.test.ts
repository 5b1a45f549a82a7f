// knex through its public API only (docs/architecture.md, "The database layer"): no server code
// names a member knex keeps to itself (a name starting with `_`, such as `_query`, `_driver` or the
// pool's mark `__knex__disposed`), nor reaches into knex's files (`knex/lib/...`). Where knex is in
// the way, the statement goes to the driver in one place per kind (server/db/dialects/pg-driver.ts,
// server/db/dialects/mysql2-driver.ts).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const KNEX_LIB = path.join(ROOT, 'node_modules', 'knex', 'lib');

function filesUnder(dir: string, suffix: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(suffix))
    .map((entry) => path.join(entry.parentPath, entry.name));
}

const isPrivate = (name: string) => name.startsWith('_');

/** The name a member is written under, when it is a plain name or a string. */
function memberName(name: ts.Node | undefined): string | undefined {
  if (!name) return undefined;
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteralLike(name)) return name.text;
  return undefined;
}

/**
 * The members a source defines whose names start with `_`: methods and properties of classes and
 * object literals, and properties assigned (`connection.__knex__disposed = error`).
 */
export function privateMembersDefined(name: string, text: string): Set<string> {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const found = new Set<string>();
  const visit = (node: ts.Node) => {
    let defined: string | undefined;
    if (ts.isMethodDeclaration(node) || ts.isPropertyDeclaration(node) || ts.isPropertyAssignment(node) || ts.isGetAccessor(node) || ts.isSetAccessor(node)) {
      defined = memberName(node.name);
    } else if (ts.isShorthandPropertyAssignment(node)) {
      defined = node.name.text;
    } else if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.EqualsToken) {
      const target = node.left;
      if (ts.isPropertyAccessExpression(target)) defined = target.name.text;
      else if (ts.isElementAccessExpression(target)) defined = memberName(target.argumentExpression);
    }
    if (defined && isPrivate(defined)) found.add(defined);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every private member knex 3 defines, from its own source. */
function knexPrivateNames(): Set<string> {
  const names = new Set<string>(['__knex__disposed']);
  for (const file of filesUnder(KNEX_LIB, '.js')) {
    for (const name of privateMembersDefined(file, fs.readFileSync(file, 'utf8'))) names.add(name);
  }
  return names;
}

/**
 * Each use of one of `names` as a member in a TypeScript source (a property read or written, an
 * element access by string, a method, property or signature declared), and each module path into
 * knex's files, as "file:line: text".
 */
export function knexPrivateUses(name: string, text: string, names: Set<string>): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
    found.push(`${name}:${line}: ${node.getText().split('\n')[0]}`);
  };
  const visit = (node: ts.Node) => {
    let used: string | undefined;
    if (ts.isPropertyAccessExpression(node)) used = node.name.text;
    else if (ts.isElementAccessExpression(node)) used = memberName(node.argumentExpression);
    else if (
      ts.isMethodDeclaration(node) ||
      ts.isPropertyDeclaration(node) ||
      ts.isMethodSignature(node) ||
      ts.isPropertySignature(node) ||
      ts.isPropertyAssignment(node) ||
      ts.isGetAccessor(node) ||
      ts.isSetAccessor(node)
    ) {
      used = memberName(node.name);
    } else if (ts.isBindingElement(node)) {
      used = memberName(node.propertyName ?? node.name);
    }
    if (used !== undefined && names.has(used)) report(node);
    if (ts.isStringLiteralLike(node) && /^knex\/./.test(node.text) && (ts.isImportDeclaration(node.parent) || ts.isCallExpression(node.parent) || ts.isExternalModuleReference(node.parent))) {
      report(node.parent);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe("knex's private members", () => {
  const names = knexPrivateNames();

  it('are read from knex itself: the ones the server once used are among them, and no public name is', () => {
    for (const known of ['_query', '_driver', '_stream', '__knex__disposed', '__knexUid', '_escapeBinding']) expect(names).toContain(known);
    for (const publicName of ['query', 'driver', 'acquireConnection', 'initializeDriver', 'validate']) expect(names).not.toContain(publicName);
  });

  it('are found as reads, writes, declarations and overrides, as is a path into knex, and other names are left alone (so the check below can fail)', () => {
    const sample = [
      "const Base = require('knex/lib/dialects/postgres/index.js');",
      "import type { X } from 'knex/types/index.js';",
      "import knexFactory from 'knex';",
      'class C extends Base { _driver() { return pg; } }',
      'interface I { _query(c: unknown): void; }',
      'connection.__knex__disposed = error;',
      "if (connection['__knex__disposed']) drop();",
      'const { _stream } = client;',
      'await client.query(connection, statement);',
      'body._ownMember = 1;',
    ].join('\n');
    expect(knexPrivateUses('sample.ts', sample, new Set([...names].filter((n) => n !== '_ownMember')))).toEqual([
      "sample.ts:1: require('knex/lib/dialects/postgres/index.js')",
      "sample.ts:2: import type { X } from 'knex/types/index.js';",
      'sample.ts:4: _driver() { return pg; }',
      'sample.ts:5: _query(c: unknown): void;',
      'sample.ts:6: connection.__knex__disposed',
      "sample.ts:7: connection['__knex__disposed']",
      'sample.ts:8: _stream',
    ]);
  });

  it('are used nowhere in server/', () => {
    const files = filesUnder(path.join(ROOT, 'server'), '.ts');
    expect(files.map((file) => path.relative(ROOT, file))).toEqual(expect.arrayContaining(['server/db/dialects/postgres.ts', 'server/db/dialects/mysql.ts']));
    const found = files.flatMap((file) => knexPrivateUses(path.relative(ROOT, file), fs.readFileSync(file, 'utf8'), names));
    expect(found).toEqual([]);
  });
});
