// Retention policies (docs/retention.md): a dry run first, runs into the trash at most
// RUN_DELETE_MAX records at a time, never a key's latest nor an immutable version, and a daily run that happens once
// across every instance (a run row per policy and day, claimed with a lease on database time).
import { createHash } from 'node:crypto';
import { AppError } from '../../common/errors.js';
import {
  RUN_DELETE_MAX,
  RUN_SAMPLE_SIZE,
  type RetentionPolicy,
  type RetentionPolicyChange,
  type RetentionPolicyCreate,
  type RetentionRules,
  type RetentionRunResult,
} from '../../common/schemas/retention.js';
import {
  type PolicyRow,
  type RunClaim,
  claimRun,
  deletePolicy,
  findPolicy,
  finishRun,
  insertPolicy,
  listPolicies,
  removableRecords,
  removableSummary,
  renewRun,
  trashRecordsOfKey,
  updatePolicy,
} from '../db/retention.js';
import { writeAudit } from '../db/audit.js';
import { appendEvent } from '../db/events.js';
import type { StoredVersion } from '../db/versions.js';
import type { Services } from './context.js';
import { isImmutable } from './immutable.js';
import { toVersionInformation } from './versions.js';

/** How long a claimed daily run is its instance's without a renewal. */
const RUN_LEASE_SECONDS = 120;

function rulesOf(source: RetentionRules): RetentionRules {
  return {
    projects: source.projects,
    branches: source.branches,
    protectedBranches: source.protectedBranches,
    keepLast: source.keepLast,
    olderThanDays: source.olderThanDays ?? null,
    inactiveBranchDays: source.inactiveBranchDays ?? null,
  };
}

/** The hash of a policy's rules: a dry run stores it, enabling compares it. */
export function rulesHash(rules: RetentionRules): string {
  return createHash('sha256').update(JSON.stringify(rulesOf(rules))).digest('hex');
}

function toAnswer(policy: PolicyRow): RetentionPolicy {
  const rules = rulesOf(policy.rules);
  return {
    id: policy.id,
    name: policy.name,
    ...rules,
    olderThanDays: rules.olderThanDays ?? null,
    inactiveBranchDays: rules.inactiveBranchDays ?? null,
    enabled: policy.enabled,
    dryRunDone: policy.dryRunHash === rulesHash(policy.rules),
    createdAt: policy.createdAt.toISOString(),
    updatedAt: policy.updatedAt.toISOString(),
  };
}

const needsDryRun = (name: string) =>
  new AppError('conflict', `retention policy "${name}" can be enabled only after a dry run of its current rules: run it with dryRun=true first`);

export async function createPolicy(services: Services, request: RetentionPolicyCreate): Promise<RetentionPolicy> {
  // A new policy has had no dry run: it cannot start enabled.
  if (request.enabled) throw needsDryRun(request.name);
  const policy = await insertPolicy(services.db, { name: request.name, rules: rulesOf(request), enabled: false, now: services.now() });
  return toAnswer(policy);
}

export async function policies(services: Services): Promise<{ policies: RetentionPolicy[] }> {
  return { policies: (await listPolicies(services.db)).map(toAnswer) };
}

export async function policy(services: Services, id: string): Promise<RetentionPolicy> {
  return toAnswer(await findPolicy(services.db, id));
}

/**
 * Changes a policy. Enabling needs a dry run of the rules it will have; changing the rules of an
 * enabled policy without a dry run of the new ones disables it (the answer says so).
 */
export async function changePolicy(services: Services, id: string, change: RetentionPolicyChange): Promise<RetentionPolicy> {
  const current = await findPolicy(services.db, id);
  const { name, enabled, ...ruleChanges } = change;
  const rules = rulesOf({ ...current.rules, ...Object.fromEntries(Object.entries(ruleChanges).filter(([, v]) => v !== undefined)) });
  const dryRunOfRules = current.dryRunHash === rulesHash(rules);
  if (enabled === true && !dryRunOfRules) throw needsDryRun(name ?? current.name);
  const stillEnabled = (enabled ?? current.enabled) && dryRunOfRules;
  const changed = await updatePolicy(services.db, id, { name, rules, enabled: stillEnabled, now: services.now() });
  services.log.info({ policy: changed.name, enabled: changed.enabled }, 'retention policy changed');
  return toAnswer(changed);
}

/** Removes a policy; what it was. */
export async function removePolicy(services: Services, id: string): Promise<RetentionPolicy> {
  return toAnswer(await deletePolicy(services.db, id));
}

/** Moves records to the trash key by key (each key under its publish lock): how many moved. */
async function trashRecords(services: Services, records: StoredVersion[], deletedBy: string, onProgress?: () => Promise<void>): Promise<number> {
  const byKey = new Map<string, StoredVersion[]>();
  for (const record of records) {
    const key = JSON.stringify([record.projectName, record.branch, record.groupId, record.artifactId]);
    byKey.set(key, [...(byKey.get(key) ?? []), record]);
  }
  let moved = 0;
  for (const ofKey of byKey.values()) {
    moved += await trashRecordsOfKey(services.db, ofKey, deletedBy, services.now());
    await onProgress?.();
  }
  return moved;
}

/**
 * A dry run (counts, the first records, and the mark that lets the policy be enabled) or a run:
 * at most RUN_DELETE_MAX records into the trash.
 */
export async function runPolicy(services: Services, id: string, dryRun: boolean, onProgress?: () => Promise<void>): Promise<RetentionRunResult> {
  const found = await findPolicy(services.db, id);
  const now = services.now();
  // No policy removes a record of an immutable version: it would need force=true (services/trash.ts).
  const spare = (version: string) => isImmutable(services, version);
  if (dryRun) {
    const summary = await removableSummary(services.db, found.rules, now, RUN_SAMPLE_SIZE, spare);
    await updatePolicy(services.db, id, { dryRunHash: rulesHash(found.rules), now });
    return {
      dryRun: true,
      wouldDelete: summary.removable,
      kept: summary.lookedAt - summary.removable,
      keptImmutable: summary.spared,
      keptInEnvironments: summary.sparedCurrent,
      sample: summary.sample.map(toVersionInformation),
    };
  }
  if (found.dryRunHash !== rulesHash(found.rules)) {
    throw new AppError('conflict', `retention policy "${found.name}" runs only after a dry run of its current rules: run it with dryRun=true first`);
  }
  const records = await removableRecords(services.db, found.rules, now, RUN_DELETE_MAX, spare);
  const deleted = await trashRecords(services, records, `retention:${found.name}`, onProgress);
  const after = await removableSummary(services.db, found.rules, services.now(), 0, spare);
  const result = {
    dryRun: false,
    deleted,
    kept: after.lookedAt - after.removable,
    keptImmutable: after.spared,
    keptInEnvironments: after.sparedCurrent,
    sample: records.slice(0, RUN_SAMPLE_SIZE).map(toVersionInformation),
  };
  services.log.info({ policy: found.name, deleted, kept: result.kept }, 'retention policy ran');
  return result;
}

/** A finished run of a policy: what `retention.finished` says. */
export interface RetentionFinished {
  policy: { id: string; name: string };
  day: string;
  deleted: number;
  kept: number;
}

/**
 * A daily run is over: its run row is marked finished and the `retention.finished` event written in
 * one transaction (docs/retention.md, "Daily runs"), and the run goes into the audit log.
 */
async function retentionFinished(services: Services, run: RunClaim, finished: RetentionFinished): Promise<void> {
  await services.db.transaction(async (trx) => {
    await finishRun(trx, run, { deleted: finished.deleted, kept: finished.kept }, services.now());
    await appendEvent(trx, 'retention.finished', { ...finished });
  });
  await writeAudit(services.db, { action: 'retention.run', target: finished.policy.id, outcome: 'ok', details: { ...finished } });
  services.log.info({ event: 'retention.finished', ...finished }, 'retention run finished');
}

/**
 * The daily retention work at `now`: from the configured time of day (UTC) on, each enabled
 * policy runs once that day, on whichever instance claims it first. A plain function of the
 * services and the time, for whichever scheduler calls it (as often as it likes): the summaries of
 * the runs this call made.
 */
export async function runDueRetention(services: Services, now: Date): Promise<RetentionFinished[]> {
  const minutes = now.getUTCHours() * 60 + now.getUTCMinutes();
  if (minutes < services.config.retentionAtMinutes) return [];
  const day = now.toISOString().slice(0, 10);
  const finished: RetentionFinished[] = [];
  for (const enabled of await listPolicies(services.db, { enabled: true })) {
    const run = await claimRun(services.db, enabled.id, day, RUN_LEASE_SECONDS, now);
    if (!run) continue;
    let renewed = Date.now();
    const renew = async () => {
      if (Date.now() - renewed < (RUN_LEASE_SECONDS * 1000) / 4) return;
      renewed = Date.now();
      await renewRun(services.db, run, RUN_LEASE_SECONDS);
    };
    const result = await runPolicy(services, enabled.id, false, renew);
    const summary = { policy: { id: enabled.id, name: enabled.name }, day, deleted: result.deleted ?? 0, kept: result.kept };
    await retentionFinished(services, run, summary);
    finished.push(summary);
  }
  return finished;
}
