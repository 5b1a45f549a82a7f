// Who may do what has one home (docs/architecture.md, "The one request pipeline"): each endpoint's
// declared `access`, described by server/services/access.ts, and the rules that depend on what a
// request names (a record's project, a token's owner), written there too and called by the services.
// docs/api.md's table is this list; no other service reads an actor's role or its token's scope.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { endpoint } from '../server/http/endpoint.js';
import { openApiDocument } from '../server/openapi.js';
import { ENDPOINTS } from '../server/routes/index.js';
import { describeAccess, refusals } from '../server/services/access.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const SERVICES = path.join(ROOT, 'server', 'services');
const BEGIN = '<!-- access table: test/access.test.ts -->';
const END = '<!-- end of the access table -->';

/** The table of every endpoint and who may call it, as docs/api.md holds it. */
function accessTable(): string {
  const rows = ENDPOINTS.map((endpoint) => `| \`${endpoint.method} ${endpoint.path}\` | ${describeAccess(endpoint.access)} |`);
  return ['| endpoint | who may call it |', '|---|---|', ...rows].join('\n');
}

/** Each place a file reads an actor's role or its project token's scope, or compares its project, as "file:line: text". */
function accessReads(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const isActor = (node: ts.Node) => ts.isIdentifier(node) && /actor/i.test(node.text);
  const visit = (node: ts.Node) => {
    const read =
      (ts.isPropertyAccessExpression(node) && isActor(node.expression) && node.name.text === 'role') ||
      (ts.isPropertyAccessExpression(node) && node.name.text === 'scope' && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'projectToken') ||
      (ts.isBinaryExpression(node) &&
        [ts.SyntaxKind.EqualsEqualsEqualsToken, ts.SyntaxKind.ExclamationEqualsEqualsToken].includes(node.operatorToken.kind) &&
        [node.left, node.right].some((side) => ts.isPropertyAccessExpression(side) && isActor(side.expression) && side.name.text === 'projectName'));
    if (read) found.push(`${name}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${node.getText()}`);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('access', () => {
  it('is listed by endpoint in docs/api.md, from the one module', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');
    const start = doc.indexOf(BEGIN);
    const end = doc.indexOf(END);
    expect(start, `docs/api.md holds the table between ${BEGIN} and ${END}`).toBeGreaterThan(0);
    const table = doc.slice(start + BEGIN.length, end).trim();
    expect(table, 'docs/api.md\'s access table, regenerated: the expected value below').toBe(accessTable());
    expect(ENDPOINTS.length).toBeGreaterThan(30);
  });

  it("gives each endpoint the 401 and 403 of its rule in the API description, from the rule alone", () => {
    const document = openApiDocument(ENDPOINTS) as { paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>> };
    for (const declared of ENDPOINTS) {
      if (declared.access === 'public') continue;
      const answers = document.paths[declared.path.replace(/:(\w+)/g, '{$1}')]![declared.method.toLowerCase()]!.responses;
      const { 401: unauthorized, 403: forbidden } = refusals(declared.access);
      expect(answers['401']?.description, `${declared.method} ${declared.path}`).toBe(unauthorized);
      expect(answers['403']?.description, `${declared.method} ${declared.path}`).toBe(forbidden);
    }
    const rule = { role: 'ROLE_ADMIN', scope: 'delete', purpose: 'p', owner: 'project' } as const;
    expect(refusals(rule)[403]).toBe(
      "Not an administrator, a project token without the scope delete, another project's record (not an administrator), or a user who must change the initial password first",
    );
    expect(refusals({ purpose: 'p', allowWhileMustChange: () => true })[403]).toBe('A project token');
    expect(refusals('reader')[403]).toBeUndefined();
  });

  it('refuses an endpoint that states its own 401 or 403 beside its rule', () => {
    const stated = endpoint({
      method: 'GET',
      path: '/v1/example',
      summary: 'x',
      tags: ['x'],
      access: { purpose: 'p' },
      responses: { 200: { description: 'ok' }, 403: { description: 'written by hand' } },
      handler: async () => ({}),
    });
    expect(() => openApiDocument([stated])).toThrow('GET /v1/example states its own 403: they derive from its access rule');
  });

  it('finds a role read, a scope read and a project comparison (so the check below can fail)', () => {
    const sample = [
      "if (actor.role !== 'ROLE_ADMIN') throw no();",
      'const s = actor.projectToken.scope;',
      'if (record.projectName === actor.projectName) go();',
      'const id = actor.projectToken?.id;',
    ].join('\n');
    expect(accessReads('sample.ts', sample)).toEqual([
      'sample.ts:1: actor.role',
      'sample.ts:2: actor.projectToken.scope',
      'sample.ts:3: record.projectName === actor.projectName',
    ]);
  });

  it('is decided in server/services/access.ts alone: no other service reads the role or the scope', () => {
    const files = fs.readdirSync(SERVICES).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && name !== 'access.ts');
    expect(files).toEqual(expect.arrayContaining(['trash.ts', 'tokens.ts', 'users.ts', 'events.ts']));
    const found = files.flatMap((name) => accessReads(`server/services/${name}`, fs.readFileSync(path.join(SERVICES, name), 'utf8')));
    expect(found).toEqual([]);
    expect(accessReads('server/services/access.ts', fs.readFileSync(path.join(SERVICES, 'access.ts'), 'utf8')).length).toBeGreaterThan(2);
  });
});
