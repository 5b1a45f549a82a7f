// The trusted_publishers table: per project, what a pipeline's ID token must show to be exchanged
// for a project token (docs/api.md, "Trusted publishing"). JSON columns are kept as text.
import { randomUUID } from 'node:crypto';
import { AppError } from '../../common/errors.js';
import type { Jwks, Provider } from '../../common/schemas/trust.js';
import type { Db } from './dialects/index.js';
import { affectedCount, toDate } from './rows.js';

export interface StoredPublisher {
  id: string;
  projectName: string;
  provider: Provider;
  issuer: string;
  audience: string;
  claims: Record<string, string>;
  branches: string[];
  environments: string[] | null;
  refClaim: string | null;
  jwks: Jwks | null;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** What a publisher is made or changed with. */
export type PublisherFields = Omit<StoredPublisher, 'id' | 'createdAt' | 'updatedAt'>;

const COLUMNS = ['id', 'project_name', 'provider', 'issuer', 'audience', 'claims', 'branches', 'environments', 'ref_claim', 'jwks', 'description', 'created_at', 'updated_at'];

const json = <T>(value: unknown): T | null => (value === null || value === undefined ? null : (JSON.parse(String(value)) as T));

function fromRow(row: Record<string, unknown>): StoredPublisher {
  return {
    id: String(row.id),
    projectName: String(row.project_name),
    provider: row.provider as Provider,
    issuer: String(row.issuer),
    audience: String(row.audience),
    claims: json<Record<string, string>>(row.claims) ?? {},
    branches: json<string[]>(row.branches) ?? ['*'],
    environments: json<string[]>(row.environments),
    refClaim: (row.ref_claim as string | null) ?? null,
    jwks: json<Jwks>(row.jwks),
    description: (row.description as string | null) ?? null,
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

function toRow(fields: PublisherFields): Record<string, unknown> {
  return {
    project_name: fields.projectName,
    provider: fields.provider,
    issuer: fields.issuer,
    audience: fields.audience,
    claims: JSON.stringify(fields.claims),
    branches: JSON.stringify(fields.branches),
    environments: fields.environments && JSON.stringify(fields.environments),
    ref_claim: fields.refClaim,
    jwks: fields.jwks && JSON.stringify(fields.jwks),
    description: fields.description,
  };
}

export async function insertPublisher(db: Db, fields: PublisherFields, now: Date): Promise<StoredPublisher> {
  const id = randomUUID();
  await db('trusted_publishers').insert({ id, ...toRow(fields), created_at: now, updated_at: now });
  return findPublisher(db, id);
}

export async function findPublisher(db: Db, id: string): Promise<StoredPublisher> {
  const row = await db('trusted_publishers').select(COLUMNS).where({ id }).first();
  if (!row) throw new AppError('not_found', `no trusted publisher with id ${id}`);
  return fromRow(row);
}

/** Every publisher, or one project's, by project then creation. */
export async function listPublishers(db: Db, filter: { projectName?: string }): Promise<StoredPublisher[]> {
  const query = db('trusted_publishers').select(COLUMNS).orderBy([{ column: 'project_name' }, { column: 'created_at' }, { column: 'id' }]);
  if (filter.projectName !== undefined) query.where({ project_name: filter.projectName });
  return (await query).map(fromRow);
}

/** The publishers whose issuer is this one (an exchange matches among them). */
export async function publishersOfIssuer(db: Db, issuer: string): Promise<StoredPublisher[]> {
  const rows = await db('trusted_publishers').select(COLUMNS).where({ issuer }).orderBy([{ column: 'created_at' }, { column: 'id' }]);
  return rows.map(fromRow);
}

/** Whether any publisher has this issuer: an ID token of any other issuer is refused before its keys are fetched. */
export async function issuerKnown(db: Db, issuer: string): Promise<boolean> {
  return (await db('trusted_publishers').select('id').where({ issuer }).first()) !== undefined;
}

export async function updatePublisher(db: Db, id: string, fields: PublisherFields, now: Date): Promise<StoredPublisher> {
  const changed = await db('trusted_publishers').where({ id }).update({ ...toRow(fields), updated_at: now });
  if (affectedCount(changed) === 0) throw new AppError('not_found', `no trusted publisher with id ${id}`);
  return findPublisher(db, id);
}

/** Deletes a publisher; false when there was none. */
export async function deletePublisher(db: Db, id: string): Promise<boolean> {
  return affectedCount(await db('trusted_publishers').where({ id }).delete()) > 0;
}
