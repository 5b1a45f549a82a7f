// The primary's postmaster killed, then the primary's machine lost, under publishing load, on the
// shipped topology (deploy/patroni/, built here by scripts/patroni.ts): etcd, three PostgreSQL nodes
// under Patroni, HAProxy; two server processes write through HAProxy's primary port, one of them
// reading from the replicas. After a crash Patroni restarts the primary read-only before promoting it
// again: writes meeting it then are refused (25006) and their connections dropped. Every acknowledged
// publish is there afterwards, none twice, no answer is a 500 and none hangs; and the outbox carries
// on on the new primary: a webhook receives the event of every acknowledged publish (at least once).
import { describe, expect, it } from 'vitest';
import { percentile, startLoad, writeGap } from '../../scripts/failover-load.js';
import { type Topology, startTopology } from '../../scripts/patroni.js';
import { LEASE_MS } from '../../server/services/outbox.js';
import { waitFor } from '../helpers/instances.js';
import { startReceiver } from '../helpers/receiver.js';
import { type ServerProcess, cleanEnv, freePort, startServerProcess } from '../helpers/process.js';
import { replicaSkip } from '../helpers/streaming.js';

const skip = replicaSkip('the Patroni failover test');
const ADMIN_PASSWORD = 'failover-admin-password';
/** The failover itself (not the topology's start) must be over within this. */
const FAILOVER_LIMIT_MS = 120_000;
/**
 * The longest a delivery can wait while the outbox works: a lease taken by a sender whose database
 * went away (30 s, LEASE_MS) and then the schedule's longest wait (10 s), with room. Past this with
 * nothing new delivered, the outbox has stopped; how long the whole backlog takes depends on how
 * many publishes the load made, which the test does not fix.
 */
const STALL_LIMIT_MS = LEASE_MS + 30_000;

/** Waits until `left()` is 0, failing when it has not gone down for `stallMs`. */
async function waitForProgress(what: string, left: () => number, stallMs: number): Promise<void> {
  let last = left();
  let movedAt = Date.now();
  while (last > 0) {
    if (Date.now() - movedAt > stallMs) throw new Error(`${what}: ${last} still missing, none for ${stallMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const now = left();
    if (now < last) movedAt = Date.now();
    last = now;
  }
}

describe.skipIf(skip)('PostgreSQL under Patroni', () => {
  it('loses no acknowledged publish, duplicates none and answers no 500 when the primary crashes and when its machine is lost', { timeout: 540_000 }, async () => {
    let topology: Topology | undefined;
    const servers: ServerProcess[] = [];
    const receiver = await startReceiver();
    try {
      topology = await startTopology({ port: freePort });
      await topology.waitHealthy(2, 180_000);
      const env = (reads: boolean) =>
        cleanEnv({ ...topology!.serverEnv({ reads }), REPO_MAN_BCRYPT_COST: '4', REPO_MAN_LOG_LEVEL: 'warn', REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
          // The receiver is on this machine; a delivery that failed while the database was away is tried again soon.
          REPO_MAN_WEBHOOK_ALLOW_NETWORKS: '127.0.0.0/8',
          REPO_MAN_WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s,10s,10s',
        });
      servers.push(await startServerProcess([], env(false), 90_000));
      servers.push(await startServerProcess([], env(true), 90_000));
      const [writer, reader] = servers.map((s) => s.url) as [string, string];
      const login = await fetch(`${writer}/v1/authentication/generate-token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: ADMIN_PASSWORD }),
      });
      const { token } = (await login.json()) as { token: string };
      const hook = await fetch(`${writer}/v1/webhooks`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
        body: JSON.stringify({ url: receiver.url, events: ['version.published'] }),
      });
      expect(hook.status).toBe(201);

      const load = startLoad({ writeUrl: writer, readUrl: reader, token, clients: 4, project: 'failover' });
      await waitFor('publishes under way', () => load.count() >= 100, 60_000, 50);
      const crashed = await topology.leader();
      const crashedAt = Date.now();
      load.phase('crash');
      topology.killPostmaster(crashed);
      const beforeCrash = load.count();
      await waitFor('publishes after the crash restart', () => load.count() >= beforeCrash + 100, FAILOVER_LIMIT_MS, 50);
      await topology.waitHealthy(2, FAILOVER_LIMIT_MS - (Date.now() - crashedAt));

      const lost = await topology.leader();
      const killedAt = Date.now();
      load.phase('during');
      topology.killNode(lost);
      // A new leader, and publishes acknowledged after it took over.
      await waitFor('a new primary', async () => (await topology!.leader().catch(() => lost)) !== lost, FAILOVER_LIMIT_MS, 500);
      const afterPromotion = load.count();
      await waitFor('publishes on the new primary', () => load.count() >= afterPromotion + 100, FAILOVER_LIMIT_MS - (Date.now() - killedAt), 50);
      load.phase('after');
      const figures = await load.stop();
      expect(Date.now() - killedAt).toBeLessThan(FAILOVER_LIMIT_MS);

      const statuses = Object.values(figures.phases).flatMap((p) => Object.entries(p.statuses));
      const unexpected = statuses.filter(([status]) => !['200', '201', '503', '0'].includes(status));
      expect(unexpected).toEqual([]);
      expect(figures.staleReads).toEqual([]);
      // Every acknowledged publish is stored, once: as many rows as distinct acknowledged coordinates.
      const acknowledged = new Set(figures.acknowledged.map((a) => `${a.artifactId}:${a.version}`));
      expect(acknowledged.size).toBe(figures.acknowledged.length);
      const stored = await topology.psql(topology.primaryPort, "select count(*) from versions where project_name = 'failover'", 'repoadmin');
      expect(Number(stored)).toBe(acknowledged.size);
      for (const a of figures.acknowledged.filter((_, i) => i % 10 === 0)) {
        const res = await fetch(`${writer}/v1/repositories/${a.uid}`, { headers: { Authorization: `Bearer ${token}` } });
        expect({ uid: a.uid, status: res.status }).toEqual({ uid: a.uid, status: 200 });
      }
      // The outbox on the new primary: each acknowledged publish's event reaches the webhook. A
      // delivery leased by a sender when its database went away is taken over when the lease ends.
      // The receiver runs in this process: each look reads only the requests that came since the
      // last, so that looking never holds up the deliveries it waits for.
      const delivered = new Set<string>();
      let read = 0;
      const missing = () => {
        for (; read < receiver.received.length; read++) delivered.add((JSON.parse(receiver.received[read]!.body) as { data: { uid: string } }).data.uid);
        return figures.acknowledged.filter((a) => !delivered.has(a.uid)).length;
      };
      await waitForProgress('every acknowledged publish delivered to the webhook', missing, STALL_LIMIT_MS);
      console.log(
        `failover figures: ${figures.acknowledged.length} acknowledged, write gap ${writeGap(figures.acknowledged, killedAt, Date.now())} ms, ` +
          `statuses ${JSON.stringify(Object.fromEntries(Object.entries(figures.phases).map(([k, v]) => [k, v.statuses])))}, ` +
          `publish p99 during ${percentile(figures.phases.during?.publishMs ?? [], 99)} ms`,
      );
    } finally {
      await Promise.all(servers.map((s) => s.stop('SIGKILL')));
      await topology?.stop();
      await receiver.close();
    }
  });
});
