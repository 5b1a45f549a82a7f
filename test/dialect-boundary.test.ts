// Each database kind behind its dialect (docs/architecture.md, "The database layer"): outside
// server/db/dialects/ and the frozen migrations, no server code compares anything with a kind's
// name; it asks the kinds' traits (server/db/dialects/kinds.ts) or the dialect instead.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..');
const KIND_NAMES = new Set(['pglite', 'postgres', 'postgresql', 'mysql', 'mariadb']);
const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

function serverFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return ['dialects', 'migrations'].includes(entry.name) && dir.endsWith(`server${path.sep}db`) ? [] : serverFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Each comparison of a value with a kind's name (`===`, `!==`, a `case`), as "file:line: text". */
function kindComparisons(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const isKind = (node: ts.Node) => ts.isStringLiteralLike(node) && KIND_NAMES.has(node.text);
  const visit = (node: ts.Node) => {
    const compared =
      (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind) && (isKind(node.left) || isKind(node.right))) ||
      (ts.isCaseClause(node) && isKind(node.expression));
    if (compared) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      found.push(`${name}:${line}: ${node.getText().split('\n')[0]}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('database kinds outside their dialects', () => {
  it('finds a comparison with a kind, a switch on one, and leaves other strings alone (so the check below can fail)', () => {
    const sample = [
      "if (config.db.kind === 'mysql') go();",
      "const x = 'postgres' !== kind;",
      "switch (kind) { case 'pglite': break; }",
      "if (credential.kind === 'session') go();",
      "const driver = { mysql: 'mysql2' };",
    ].join('\n');
    expect(kindComparisons('sample.ts', sample)).toEqual([
      "sample.ts:1: config.db.kind === 'mysql'",
      "sample.ts:2: 'postgres' !== kind",
      "sample.ts:3: case 'pglite': break;",
    ]);
  });

  it('are compared nowhere in server/ outside server/db/dialects/ and server/db/migrations/', () => {
    const files = serverFiles(path.join(ROOT, 'server'));
    expect(files.map((file) => path.relative(ROOT, file))).toEqual(expect.arrayContaining(['server/config.ts', 'server/db/connect.ts', 'server/http/reads.ts']));
    expect(files.some((file) => file.includes(`${path.sep}dialects${path.sep}`))).toBe(false);
    const found = files.flatMap((file) => kindComparisons(path.relative(ROOT, file), fs.readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });
});
