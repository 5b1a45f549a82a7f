// Retention policies on the fixture, on every database kind: a dry run counts what an
// independent computation here says, the run deletes exactly that, every key's latest and every
// protected branch stay; the daily run happens once across instances.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetentionPolicyCreate, type RetentionRules } from '../../common/schemas/retention.js';
import { toRow } from '../../server/db/versions.js';
import { changePolicy, createPolicy, runDueRetention, runPolicy } from '../../server/services/retention.js';
import { byUid } from '../../server/services/versions.js';
import { dbKinds } from '../helpers/db.js';
import { type TestServer, startTestServer } from '../helpers/server.js';
import { servicesOf } from './services.js';

const DAY = 86_400_000;
const NOW = new Date('2026-06-01T12:00:00Z');

/** A small deterministic generator, so every kind gets the same fixture. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

interface Fixture {
  uid: string;
  project_name: string;
  branch: string;
  group_id: string;
  artifact_id: string;
  version: string;
  creation_date: Date;
  latest_version: boolean;
}

/** Projects x branches x artifacts x versions, published out of order, dated over 200 days. */
function fixture(): Record<string, unknown>[] {
  const next = random(25);
  const rows: Record<string, unknown>[] = [];
  for (const project of ['alpha', 'beta']) {
    for (const branch of ['main', 'release/1.x', 'feature/login', 'feature/search', 'feature/stale', 'bugfix/7']) {
      for (const artifact of ['core', 'cli']) {
        const versions = Array.from({ length: 10 }, (_, i) => `1.${i < 5 ? i : i + 5}.${Math.floor(next() * 3)}`);
        // The latest is any one of them (not always the highest), and some keys have none.
        const latest = next() < 0.85 ? Math.floor(next() * versions.length) : -1;
        versions.forEach((version, i) => {
          const age = branch === 'feature/stale' ? 120 + next() * 80 : next() * 200;
          rows.push(
            toRow({
              projectName: project,
              branch,
              groupId: 'com.acme',
              artifactId: artifact,
              version,
              repositoryUrl: null,
              creationDate: new Date(NOW.getTime() - Math.floor(age * DAY)),
              type: 'jar',
              latestVersion: i === latest,
              description: null,
            }),
          );
        });
      }
    }
  }
  // Shuffled: insertion order is not version order.
  for (let i = rows.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [rows[i], rows[j]] = [rows[j]!, rows[i]!];
  }
  return rows;
}

/** Version order for the fixture's versions (numeric parts), written independently of common/version-key.ts. */
function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i]! - pb[i]!;
  return 0;
}

function globMatches(glob: string, value: string): boolean {
  return new RegExp(`^${glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\/]/g, '\\$&')).join('.*')}$`).test(value);
}

/** The uids the rules remove from these rows at `now`, computed from the documented rules alone. */
function expectedRemovals(rows: Fixture[], rules: RetentionRules, now: Date): Set<string> {
  const considered = rows.filter(
    (r) =>
      rules.projects.some((g) => globMatches(g, r.project_name)) &&
      rules.branches.some((g) => globMatches(g, r.branch)) &&
      !rules.protectedBranches.some((g) => globMatches(g, r.branch)),
  );
  const branchLast = new Map<string, number>();
  for (const r of considered) {
    const b = `${r.project_name}|${r.branch}`;
    branchLast.set(b, Math.max(branchLast.get(b) ?? 0, new Date(r.creation_date).getTime()));
  }
  const keys = new Map<string, Fixture[]>();
  for (const r of considered) {
    const k = `${r.project_name}|${r.branch}|${r.group_id}|${r.artifact_id}`;
    keys.set(k, [...(keys.get(k) ?? []), r]);
  }
  const gone = new Set<string>();
  for (const records of keys.values()) {
    const ordered = [...records].sort((a, b) => compareVersions(b.version, a.version));
    ordered.forEach((r, i) => {
      if (r.latest_version) return;
      const age = now.getTime() - new Date(r.creation_date).getTime();
      const beyondKept = i >= rules.keepLast && (!rules.olderThanDays || age > rules.olderThanDays * DAY);
      const inactive = rules.inactiveBranchDays !== null && rules.inactiveBranchDays !== undefined &&
        now.getTime() - branchLast.get(`${r.project_name}|${r.branch}`)! > rules.inactiveBranchDays * DAY;
      if (beyondKept || inactive) gone.add(r.uid);
    });
  }
  return gone;
}

describe.each(dbKinds())('retention on %s', (kind) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ kind });
    const rows = fixture().map((row, i) => ({ ...row, uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}` }));
    await server.db.batchInsert('versions', rows, 100);
  });
  afterAll(() => server?.close());

  const services = () => servicesOf(server, () => NOW);
  const current = async () =>
    (await server.db('versions').select('uid', 'project_name', 'branch', 'group_id', 'artifact_id', 'version', 'creation_date', 'latest_version')).map(
      (r: Fixture) => ({ ...r, latest_version: Boolean(r.latest_version) }),
    );
  const latestUids = async () => new Set((await current()).filter((r) => r.latest_version).map((r) => r.uid));

  /** Dry run, run, and the checks every run must pass. */
  async function runAndCheck(name: string, request: Record<string, unknown>): Promise<number> {
    const rules = RetentionPolicyCreate.parse({ name, ...request });
    const before = await current();
    const expected = expectedRemovals(before, rules, NOW);
    const latestBefore = await latestUids();
    const protectedBefore = before.filter((r) => rules.protectedBranches.some((g) => globMatches(g, r.branch))).map((r) => r.uid).sort();
    const created = await createPolicy(services(), rules);

    await expect(runPolicy(services(), created.id, false)).rejects.toMatchObject({ code: 'conflict' });
    const dry = await runPolicy(services(), created.id, true);
    expect(dry.wouldDelete).toBe(expected.size);
    expect(dry.sample.length).toBe(Math.min(20, expected.size));
    expect(dry.sample.every((r) => expected.has(r.uid))).toBe(true);
    expect((await current()).length).toBe(before.length);

    const run = await runPolicy(services(), created.id, false);
    expect(run.deleted).toBe(expected.size);
    const after = await current();
    expect(new Set(before.map((r) => r.uid).filter((uid) => !after.some((a) => a.uid === uid)))).toEqual(expected);
    expect(await latestUids()).toEqual(latestBefore);
    expect(after.filter((r) => rules.protectedBranches.some((g) => globMatches(g, r.branch))).map((r) => r.uid).sort()).toEqual(protectedBefore);
    expect(await server.db('versions_trash').whereIn('uid', [...expected]).where('deleted_by', `retention:${name}`)).toHaveLength(expected.size);
    expect((await runPolicy(services(), created.id, true)).wouldDelete).toBe(0);
    return expected.size;
  }

  it('a fixture of a few hundred records', async () => {
    const rows = await current();
    expect(rows.length).toBe(240);
    expect(new Set(rows.map((r) => r.version)).size).toBeGreaterThan(20);
  });

  it('olderThanDays removes only records older than the days beyond the kept ones', async () => {
    expect(await runAndCheck('older', { keepLast: 4, olderThanDays: 100, branches: ['feature/*', 'bugfix/*'] })).toBeGreaterThan(5);
  });

  it('inactiveBranchDays removes every record but the latest of a branch idle that long', async () => {
    expect(await runAndCheck('idle', { keepLast: 50, inactiveBranchDays: 119 })).toBeGreaterThan(5);
    const stale = await server.db('versions').where({ branch: 'feature/stale' });
    expect(stale.every((r: { latest_version: unknown }) => Boolean(r.latest_version))).toBe(true);
  });

  it('keepLast per key by version order, in one project only, protected branches untouched', async () => {
    expect(await runAndCheck('alpha-keep', { keepLast: 3, projects: ['alpha'] })).toBeGreaterThan(5);
    expect(await runAndCheck('keep-two', { keepLast: 2, protectedBranches: ['main', 'release/*', 'bugfix/*'] })).toBeGreaterThan(5);
  });

  it('enabling needs a dry run of the current rules; changing the rules disables', async () => {
    const s = services();
    const created = await createPolicy(s, RetentionPolicyCreate.parse({ name: 'gate', keepLast: 1 }));
    await expect(changePolicy(s, created.id, { enabled: true })).rejects.toMatchObject({ code: 'conflict' });
    await runPolicy(s, created.id, true);
    expect((await changePolicy(s, created.id, { enabled: true })).enabled).toBe(true);
    const changed = await changePolicy(s, created.id, { keepLast: 2 });
    expect(changed).toMatchObject({ enabled: false, dryRunDone: false });
    await expect(changePolicy(s, created.id, { enabled: true })).rejects.toMatchObject({ code: 'conflict' });
    await expect(createPolicy(s, RetentionPolicyCreate.parse({ name: 'gate', keepLast: 1 }))).rejects.toMatchObject({ code: 'conflict' });
    await expect(createPolicy(s, RetentionPolicyCreate.parse({ name: 'on-at-once', keepLast: 1, enabled: true }))).rejects.toMatchObject({ code: 'conflict' });
  });

  it('the daily run happens once a day across instances, from the configured time on', async () => {
    const s = services();
    const created = await createPolicy(s, RetentionPolicyCreate.parse({ name: 'daily', keepLast: 1 }));
    await runPolicy(s, created.id, true);
    await changePolicy(s, created.id, { enabled: true });
    const before = new Date('2026-06-02T02:59:00Z');
    const at = new Date('2026-06-02T03:00:30Z');
    expect(await runDueRetention(servicesOf(server, () => before), before)).toEqual([]);

    // A second instance on the same database (PGlite: the same process).
    const other = kind === 'pglite' ? server : await startTestServer({ kind, database: server.database });
    try {
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => runDueRetention(servicesOf(i % 2 ? other : server, () => at), at)),
      );
      const runs = results.flat().filter((r) => r.policy.name === 'daily');
      expect(runs).toHaveLength(1);
      expect(runs[0]!.deleted).toBeGreaterThan(0);
      expect(await runDueRetention(servicesOf(other, () => at), new Date('2026-06-02T23:59:00Z'))).toEqual([]);
      const rows = await server.db('retention_runs').where({ policy_id: created.id });
      expect(rows).toMatchObject([{ day: '2026-06-02', status: 'finished', deleted: runs[0]!.deleted }]);

      // A run whose owner died (lease over, never finished) is taken over; a finished one never.
      await server.db('retention_runs').insert({
        policy_id: created.id, day: '2026-06-03', status: 'running', claimed_by: 'gone', lease_until: new Date('2026-01-01T00:00:00Z'), started_at: NOW,
      });
      const next = new Date('2026-06-03T04:00:00Z');
      expect((await runDueRetention(servicesOf(other, () => next), next)).map((r) => r.day)).toEqual(['2026-06-03']);
    } finally {
      if (other !== server) await other.close();
    }
  });

  it('a dry run shows each sampled record as a read of it does, with its provenance and veto', async () => {
    const key = { projectName: 'gamma', branch: 'feature/sampled', groupId: 'com.acme', artifactId: 'sampled', repositoryUrl: null, type: 'jar', description: null };
    const provenance = JSON.stringify({
      issuer: 'https://ci.example', subject: 'repo:acme/sampled:ref:refs/heads/main', repository: 'acme/sampled', repositoryId: '7',
      ref: 'refs/heads/main', sha: 'abc123', workflow: 'build', runId: '9', runUrl: null, environment: null,
      publisherId: '00000000-0000-4000-a000-000000000001', verifiedAt: '2026-05-01T00:00:00.000Z',
    });
    const rows = ['1.0.0', '2.0.0', '3.0.0'].map((version, i) => ({
      ...toRow({ ...key, version, creationDate: new Date(NOW.getTime() - (30 - i) * DAY), latestVersion: i === 2, provenance }),
      uid: `00000000-0000-4000-9000-00000000000${i}`,
      ...(i === 0 ? { veto_reason: 'broken build', veto_by: 'admin', veto_at: new Date(NOW.getTime() - DAY) } : {}),
    }));
    await server.db.batchInsert('versions', rows, 10);
    try {
      const s = services();
      const created = await createPolicy(s, RetentionPolicyCreate.parse({ name: 'sampled', keepLast: 1, projects: ['gamma'] }));
      const dry = await runPolicy(s, created.id, true);
      const sample = [...dry.sample].sort((a, b) => a.version.localeCompare(b.version));
      expect(sample).toEqual([await byUid(s, rows[0]!.uid), await byUid(s, rows[1]!.uid)]);
      expect(sample[0]).toMatchObject({ veto: { reason: 'broken build', by: 'admin' }, provenance: { repository: 'acme/sampled' } });
    } finally {
      await server.db('versions').where({ project_name: 'gamma' }).delete();
    }
  });
});
