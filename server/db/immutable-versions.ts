// The immutable_versions table: the content an immutable version's coordinates keep once their
// record is deleted (migration 20261127000000_immutable_versions, docs/retention.md).
import { type Db, dialectOf } from './dialects/index.js';
import { toDate } from './rows.js';
import { COORDINATE_COLUMNS } from './versions.js';

/** What a record of an immutable version is published with, kept after the record is gone. */
export interface KeptContent {
  /** The uid of the record it was kept from. */
  uid: string;
  repositoryUrl: string | null;
  creationDate: Date;
  type: string;
  description: string | null;
}

interface Coordinates {
  projectName: string;
  branch: string;
  groupId: string;
  artifactId: string;
  version: string;
}

const CONTENT_COLUMNS = ['repository_url', 'creation_date', 'type', 'description'];

const whereOf = (c: Coordinates) => ({ project_name: c.projectName, branch: c.branch, group_id: c.groupId, artifact_id: c.artifactId, version: c.version });

/**
 * Keeps the content of a versions row (or a trash row) that is going: the first content kept of
 * its coordinates stays. Runs in the transaction that deletes the row.
 */
export async function keepContent(db: Db, row: Record<string, unknown>, now: Date): Promise<void> {
  const kept = Object.fromEntries([...COORDINATE_COLUMNS, ...CONTENT_COLUMNS, 'uid'].map((c) => [c, row[c]]));
  await dialectOf(db).insertIfAbsent(db, 'immutable_versions', { ...kept, kept_at: now });
}

/** The content kept of these coordinates, if any. */
export async function findKept(db: Db, coordinates: Coordinates): Promise<KeptContent | undefined> {
  const row = await db('immutable_versions').select([...CONTENT_COLUMNS, 'uid']).where(whereOf(coordinates)).first();
  if (!row) return undefined;
  return {
    uid: String(row.uid),
    repositoryUrl: (row.repository_url as string | null) ?? null,
    creationDate: toDate(row.creation_date),
    type: String(row.type),
    description: (row.description as string | null) ?? null,
  };
}
