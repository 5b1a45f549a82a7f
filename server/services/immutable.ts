// Immutable versions (docs/retention.md, "Immutable versions"): with --repoadmin_immutable_versions,
// a record whose version matches cannot be replaced by a different one under the same coordinates;
// an identical republish (a pipeline's retry) stays a success. The one home of the rule: the
// publish path asks `checkImmutable`, deleting asks `isImmutable`.
import { AppError } from '../../common/errors.js';
import type { Db } from '../db/dialects/index.js';
import { type StoredVersion, type VersionFields, findByCoordinates } from '../db/versions.js';
import type { Services } from './context.js';

export function isImmutable(services: Services, version: string): boolean {
  return services.config.immutableVersions?.test(version) ?? false;
}

/** The fields of a record that an immutable version keeps (the latest flag may change). */
function differences(stored: StoredVersion, fields: VersionFields, dateGiven: boolean): string[] {
  const changed: string[] = [];
  if (stored.repositoryUrl !== fields.repositoryUrl) changed.push('repositoryUrl');
  // A record published without a date takes the time of its publish: its retry is the same record.
  if (dateGiven && stored.creationDate.getTime() !== fields.creationDate.getTime()) changed.push('creationDate');
  if (stored.type !== fields.type) changed.push('type');
  if (stored.description !== fields.description) changed.push('description');
  return changed;
}

/**
 * Refuses (conflict, nothing written) the publish of `fields` when its version is immutable and
 * its coordinates hold a record that differs in anything but the latest flag. `dateGiven`: whether
 * the publish named a creationDate. The fields to write: a republish without a date keeps the
 * stored one.
 */
export async function checkImmutable(services: Services, db: Db, fields: VersionFields, dateGiven: boolean): Promise<VersionFields> {
  if (!isImmutable(services, fields.version)) return fields;
  const stored = await findByCoordinates(db, fields);
  if (!stored) return fields;
  const changed = differences(stored, fields, dateGiven);
  if (changed.length === 0) return { ...fields, creationDate: stored.creationDate };
  throw new AppError(
    'conflict',
    `${fields.groupId}:${fields.artifactId}:${fields.version} on ${fields.projectName} ${fields.branch} is immutable and already published with another ${changed.join(', ')}: publish a new version instead`,
    { body: { uid: stored.uid, fields: changed } },
  );
}
