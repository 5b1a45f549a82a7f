// Immutable versions (docs/retention.md, "Immutable versions"): with --repoadmin_immutable_versions,
// a version whose number matches, once published, never comes back with other content under the
// same coordinates: not by a republish, nor by one after its record was deleted (with force) or
// purged from the trash, nor by restoring another record from the trash. An identical republish
// (a pipeline's retry) stays a success. The one home of the rule: what "content" is, the rule the
// publish statement checks under the key's lock (`immutableRule`), why a publish was refused
// (`explainImmutable`), what a restore checks (`checkRestore`); deleting asks `isImmutable` and
// keeps the content of what it deletes (server/db/immutable-versions.ts).
import { AppError } from '../../common/errors.js';
import type { ImmutableRule } from '../db/dialects/index.js';
import { type KeptContent, findKept } from '../db/immutable-versions.js';
import { type StoredVersion, type VersionFields, findByCoordinates } from '../db/versions.js';
import type { Services } from './context.js';

export function isImmutable(services: Services, version: string): boolean {
  return services.config.immutableVersions?.test(version) ?? false;
}

/**
 * A record's content: what an immutable version keeps. The latest flag is not content (it may
 * change); the creation date is compared only when the publish names one (a record published
 * without a date takes the time of its publish, so its retry is the same record).
 */
const CONTENT = [
  { field: 'repositoryUrl', column: 'repository_url' },
  { field: 'creationDate', column: 'creation_date' },
  { field: 'type', column: 'type' },
  { field: 'description', column: 'description' },
] as const;

type Content = Pick<VersionFields, (typeof CONTENT)[number]['field']>;

const compared = (dateGiven: boolean) => (dateGiven ? CONTENT : CONTENT.filter((c) => c.field !== 'creationDate'));

function sameValue(a: Content[keyof Content], b: Content[keyof Content]): boolean {
  return a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;
}

/** The content fields in which `fields` differ from what is stored. */
function differences(stored: Content, fields: Content, dateGiven: boolean): string[] {
  return compared(dateGiven)
    .filter(({ field }) => !sameValue(stored[field], fields[field]))
    .map(({ field }) => field);
}

/**
 * The rule the publish of `fields` carries when its version is immutable (server/db/dialects,
 * ImmutableRule): checked by the database under the key's lock, where the write happens, so two
 * different publishes at once cannot both pass. `dateGiven`: whether the publish named a creationDate.
 */
export function immutableRule(services: Services, fields: VersionFields, dateGiven: boolean): ImmutableRule | undefined {
  if (!isImmutable(services, fields.version)) return undefined;
  return { content: compared(dateGiven).map(({ column }) => column) };
}

function refusal(fields: VersionFields, stored: { uid: string }, changed: string[], deleted: boolean): AppError {
  const coordinates = `${fields.groupId}:${fields.artifactId}:${fields.version} on ${fields.projectName} ${fields.branch}`;
  const how = deleted
    ? `was published with another ${changed.join(', ')} (that record was deleted since; an immutable version never comes back with other content)`
    : `already published with another ${changed.join(', ')}`;
  return new AppError('conflict', `${coordinates} is immutable and ${how}: publish a new version instead`, { body: { uid: stored.uid, fields: changed } });
}

/**
 * Says why the database refused an immutable version's publish (its rule did not hold): throws the
 * conflict naming the fields that differ from the stored record, or from the content kept of a
 * deleted one. Returns when nothing differs (the refusal had another reason). Content once stored
 * never changes, so reading it after the refusal reads what refused it.
 */
export async function explainImmutable(services: Services, fields: VersionFields, dateGiven: boolean): Promise<void> {
  const live = await findByCoordinates(services.db, fields);
  const stored = live ?? (await findKept(services.db, fields));
  if (!stored) return;
  const changed = differences(stored, fields, dateGiven);
  if (changed.length > 0) throw refusal(fields, stored, changed, !live);
}

/**
 * Refuses (conflict) to restore a record of an immutable version whose coordinates kept another
 * content when a record of them was deleted: the original record itself restores.
 */
export function checkRestore(services: Services, record: StoredVersion, kept: KeptContent | undefined): void {
  if (!kept || !isImmutable(services, record.version)) return;
  const changed = differences(kept, record, true);
  if (changed.length > 0) throw refusal(record, kept, changed, true);
}

/** A provenance without the time of its verification: two tokens of one build have the same. */
function build(provenance: string): string {
  const { verifiedAt: _verifiedAt, ...rest } = JSON.parse(provenance) as Record<string, unknown>;
  return JSON.stringify(rest);
}

/**
 * Refuses (conflict) a publish through a token made by an ID token exchange whose provenance is of
 * another build than the one an immutable version's record keeps (docs/api.md, "Provenance"). A
 * mutable version's record keeps its first provenance too: the publish goes ahead.
 */
export async function checkProvenance(services: Services, fields: VersionFields): Promise<void> {
  if (!fields.provenance || !isImmutable(services, fields.version)) return;
  const live = await findByCoordinates(services.db, fields);
  if (!live?.provenance || build(live.provenance) === build(fields.provenance)) return;
  const coordinates = `${fields.groupId}:${fields.artifactId}:${fields.version} on ${fields.projectName} ${fields.branch}`;
  const kept = JSON.parse(live.provenance) as { runUrl?: string | null; subject?: string };
  throw new AppError('conflict', `${coordinates} is immutable and was published by another build (${kept.runUrl ?? kept.subject ?? 'unknown'}): its provenance never changes; publish a new version instead`, {
    body: { uid: live.uid, fields: ['provenance'] },
  });
}
