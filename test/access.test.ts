// Who may do what has one home (docs/architecture.md, "The one request pipeline"): each endpoint's
// declared `access`, described by server/policy/access.ts, and the rules that depend on what a
// request names (a record's project, a token's owner), written there too and called by the services.
// docs/api.md's table is this list; no other service reads an actor's role or its token's scope.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { type Owner, endpoint } from '../server/http/endpoint.js';
import { openApiDocument } from '../server/openapi.js';
import { ENDPOINTS } from '../server/routes/index.js';
import { decideOwner, describeAccess, refusals } from '../server/policy/access.js';
import type { Actor } from '../server/services/context.js';

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
    const rule = { role: 'ROLE_ADMIN', scope: 'delete', purpose: 'p', owner: { rule: 'project', doing: 'x' } } as const;
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

  it('is decided in server/policy/access.ts alone: no service reads the role or the scope, compares a project, or calls a rule', () => {
    const files = fs.readdirSync(SERVICES).filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'));
    expect(files).toEqual(expect.arrayContaining(['trash.ts', 'tokens.ts', 'users.ts', 'events.ts', 'environments.ts']));
    const found = files.flatMap((name) => accessReads(`server/services/${name}`, fs.readFileSync(path.join(SERVICES, name), 'utf8')));
    expect(found).toEqual([]);
    const importing = files.filter((name) => /from '\.\.\/policy\/access\.js'/.test(fs.readFileSync(path.join(SERVICES, name), 'utf8')));
    expect(importing, 'services that import the access rules').toEqual([]);
    expect(accessReads('server/policy/access.ts', fs.readFileSync(path.join(ROOT, 'server', 'policy', 'access.ts'), 'utf8')).length).toBeGreaterThan(2);
  });

  it("decides the rules of what a request names: the project or user the handler acts for, or the refusal", () => {
    const user = (projectName: string | null, extra: Partial<Actor> = {}): Actor => ({ userId: 'u-1', username: 'alice', role: 'ROLE_USER', projectName, mustChangePassword: false, ...extra });
    const admin = user(null, { userId: 'a-1', username: 'admin', role: 'ROLE_ADMIN' });
    const project: Owner = { rule: 'project', doing: 'delete only records of' };
    expect(decideOwner(project, user('p1'), { projectName: 'p1' }, {})).toBe('p1');
    expect(decideOwner(project, user('p1'), {}, {})).toBe('p1');
    expect(() => decideOwner(project, user('p1'), { projectName: 'p2' }, {})).toThrow('user alice may delete only records of project "p1", not "p2"');
    expect(decideOwner(project, admin, { projectName: 'p2' }, {})).toBe('p2');
    expect(decideOwner(project, admin, {}, {})).toBeUndefined();

    const self: Owner = { rule: 'self', doing: 'make the tokens of' };
    expect(decideOwner(self, user('p1'), {}, {})).toBe('u-1');
    expect(decideOwner(self, user('p1'), { userId: 'U-1' }, {})).toBe('u-1');
    expect(() => decideOwner(self, user('p1'), { userId: 'u-2' }, {})).toThrow('only administrators may make the tokens of other users');
    expect(decideOwner(self, admin, { userId: 'u-2' }, {})).toBe('u-2');
    expect(decideOwner(self, admin, {}, {})).toBe('a-1');
    expect(decideOwner({ ...self, everyone: true }, admin, {}, {})).toBeUndefined();
    expect(decideOwner({ ...self, everyone: true }, user('p1'), {}, {})).toBe('u-1');
    const hidden: Owner = { ...self, hiddenAs: (params) => `no token with id ${params.id}` };
    expect(() => decideOwner(hidden, user('p1'), { userId: 'u-2' }, { id: 't-9' })).toThrow(expect.objectContaining({ code: 'not_found', message: 'no token with id t-9' }));

    const events: Owner = { rule: 'events', doing: 'read events' };
    expect(decideOwner(events, admin, {}, {})).toBeUndefined();
    expect(decideOwner(events, user('p1', { projectToken: { id: 't', name: 't', scope: 'read' } as Actor['projectToken'] }), {}, {})).toBe('p1');
    expect(() => decideOwner(events, user('p1'), {}, {})).toThrow(/events are for administrators and project tokens/);

    const environment: Owner = { rule: 'environment', doing: 'promote' };
    expect(() => decideOwner(environment, user('p1'), { projectName: 'p1', environment: { name: 'prod', protected: true } }, {})).toThrow(/protected/);
    expect(decideOwner(environment, user('p1'), { projectName: 'p1', environment: { name: 'dev', protected: false } }, {})).toBe('p1');
    expect(() => decideOwner(environment, user('p1'), { projectName: 'p2', environment: { name: 'dev', protected: false } }, {})).toThrow(/only in project "p1"/);
  });

  it('applies the rule of what a request names before the handler, on every endpoint that declares one', () => {
    const declared = ENDPOINTS.filter((e) => e.access !== 'public' && e.access !== 'reader' && e.access.owner);
    expect(declared.map((e) => `${e.method} ${e.path}`).sort()).toEqual(
      [
        'DELETE /v1/repositories/{uid}',
        'DELETE /v1/repositories/{uid}/veto',
        'DELETE /v1/tokens',
        'DELETE /v1/tokens/{id}',
        'GET /v1/events',
        'GET /v1/tokens',
        'GET /v1/trash',
        'POST /v1/promotions',
        'POST /v1/repositories',
        'POST /v1/tokens',
        'POST /v1/trash/{uid}/restore',
        'PUT /v1/repositories/{uid}/veto',
        'PUT /v1/users/{userId}/password',
      ].sort(),
    );
    // Every rule but the event feed's judges something the request names, which the endpoint finds.
    for (const e of declared) {
      const access = e.access as Exclude<typeof e.access, string>;
      if (access.owner!.rule !== 'events' && !access.checkedByHandler) expect(e.subject, `${e.method} ${e.path}`).toBeTypeOf('function');
    }
  });
});
