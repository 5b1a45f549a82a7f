// The tokens table: project tokens, by their SHA-256 hash, with the user each one acts as.
import type { Knex } from 'knex';
import { AppError } from '../../common/errors.js';
import type { TokenScope } from '../../common/schemas/tokens.js';
import type { Role } from '../../common/schemas/users.js';
import type { BoundSql, Db } from './dialects/index.js';
import { isForeignKeyViolation, isUniqueViolation, toDate, toNumber } from './rows.js';
import { cachedRows } from './statements.js';

export interface TokenRow {
  id: string;
  userId: string;
  username: string;
  projectName: string | null;
  name: string;
  scope: TokenScope;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  /** 'oidc': made by an ID token exchange (docs/api.md, "Trusted publishing"); 'ordinary' otherwise. */
  kind: TokenKind;
  /** An oidc token's branch; null for an ordinary token, and for an oidc token of a tag build. */
  branch: string | null;
  publisherId: string | null;
}

export type TokenKind = 'ordinary' | 'oidc';

/** What an oidc token is bound to, as the publish checks it (server/policy/publish.ts). */
export interface OidcBinding {
  branch: string | null;
  publisherId: string;
  /** The repository address a publish through it must name (github, gitlab); null: any. */
  repositoryUrl: string | null;
  /** The provenance (JSON) copied from the verified ID token. */
  provenance: string;
  /** The publisher's branch globs now (a tag build's token may publish to these); null: the publisher is gone. */
  publisherBranches: string[] | null;
  /** The publisher's environments now (scope promote); null: none. */
  publisherEnvironments: string[] | null;
}

/** A token with its user as the database has it now: what a request acts as. */
export interface TokenWithUser extends TokenRow {
  role: Role;
  mustChangePassword: boolean;
  /** Set for an oidc token. */
  oidc?: OidcBinding;
}

const COLUMNS = [
  't.id',
  't.user_id',
  'u.username',
  'u.project_name',
  't.name',
  't.scope',
  't.created_at',
  't.expires_at',
  't.last_used_at',
  't.kind',
  't.branch',
  't.publisher_id',
];

const nullableDate = (value: unknown) => (value === null || value === undefined ? null : toDate(value));

function toToken(row: Record<string, unknown>): TokenRow {
  return {
    id: String(row.id),
    userId: String(row.user_id),
    username: String(row.username),
    projectName: (row.project_name as string | null) ?? null,
    name: String(row.name),
    scope: row.scope as TokenScope,
    createdAt: toDate(row.created_at),
    expiresAt: nullableDate(row.expires_at),
    lastUsedAt: nullableDate(row.last_used_at),
    kind: row.kind === 'oidc' ? 'oidc' : 'ordinary',
    branch: (row.branch as string | null) ?? null,
    publisherId: row.publisher_id === null || row.publisher_id === undefined ? null : String(row.publisher_id),
  };
}

const jsonOrNull = <T>(value: unknown): T | null => (value === null || value === undefined ? null : (JSON.parse(String(value)) as T));

const withUser = (db: Db) => db('tokens as t').join('users as u', 'u.id', 't.user_id');

/**
 * The token of this hash with its user, in one indexed lookup. Every request with a project token
 * makes it: built once, a prepared statement where the driver has them, as the user of a session
 * token is read (server/db/users.ts).
 */
export async function findTokenByHash(db: Db, tokenHash: string): Promise<TokenWithUser | undefined> {
  const [row] = await cachedRows(
    db,
    'token-by-hash',
    [tokenHash],
    () =>
      `select ${[...COLUMNS, 'u.role', 'u.must_change_password', 't.repository_url', 't.provenance', 'p.branches as publisher_branches', 'p.environments as publisher_environments'].join(', ')}
       from tokens t join users u on u.id = t.user_id left join trusted_publishers p on p.id = t.publisher_id
       where t.token_hash = ? limit 1`,
  );
  if (!row) return undefined;
  const token = toToken(row);
  const found: TokenWithUser = { ...token, role: row.role as Role, mustChangePassword: Boolean(row.must_change_password) };
  if (token.kind === 'oidc' && token.publisherId) {
    found.oidc = {
      branch: token.branch,
      publisherId: token.publisherId,
      repositoryUrl: (row.repository_url as string | null) ?? null,
      provenance: String(row.provenance),
      publisherBranches: jsonOrNull<string[]>(row.publisher_branches),
      publisherEnvironments: jsonOrNull<string[]>(row.publisher_environments),
    };
  }
  return found;
}

export async function findTokenById(db: Db, id: string): Promise<TokenRow | undefined> {
  const row = await withUser(db).select(COLUMNS).where('t.id', id).first();
  return row ? toToken(row) : undefined;
}

/**
 * One page of every token, or of one user's, by user name and token name (both unique, so the order
 * is total), then id, so that it stays total whatever a column's collation: pages neither repeat
 * nor skip a token.
 */
export async function listTokens(
  db: Db,
  filter: { userId?: string },
  paging: { page: number; size: number },
): Promise<{ items: TokenRow[]; total: number }> {
  const filtered = <Q extends Knex.QueryBuilder>(query: Q) => (filter.userId ? query.where('t.user_id', filter.userId) : query);
  const [rows, count] = await Promise.all([
    filtered(withUser(db).select(COLUMNS))
      .orderBy([{ column: 'u.username' }, { column: 't.name' }, { column: 't.id' }])
      .limit(paging.size)
      .offset((paging.page - 1) * paging.size),
    filtered(db('tokens as t').count({ n: '*' })).first(),
  ]);
  return { items: rows.map(toToken), total: toNumber(count?.n) };
}

/** The user's ordinary tokens that have not expired at `now` (revoked ones are gone from the table). */
export async function countActiveTokens(db: Db, userId: string, now: Date): Promise<number> {
  const [row] = await db('tokens')
    .where({ user_id: userId, kind: 'ordinary' })
    .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
    .count({ n: '*' });
  return Number(row!.n);
}

export interface NewToken {
  id: string;
  userId: string;
  name: string;
  scope: TokenScope;
  tokenHash: string;
  createdAt: Date;
  expiresAt: Date | null;
  /** Set for a token made by an ID token exchange. */
  oidc?: { branch: string | null; publisherId: string; repositoryUrl: string | null; provenance: string };
}

export async function insertToken(db: Db, token: NewToken): Promise<void> {
  try {
    await db('tokens').insert({
      id: token.id,
      user_id: token.userId,
      name: token.name,
      scope: token.scope,
      token_hash: token.tokenHash,
      created_at: token.createdAt,
      expires_at: token.expiresAt,
      ...(token.oidc
        ? { kind: 'oidc', branch: token.oidc.branch, publisher_id: token.oidc.publisherId, repository_url: token.oidc.repositoryUrl, provenance: token.oidc.provenance }
        : {}),
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError('conflict', `a token named "${token.name}" exists already for this user: revoke it first, or choose another name`, {
        cause: error,
      });
    }
    // The user was deleted since it was looked up.
    if (isForeignKeyViolation(error)) throw new AppError('not_found', `no user with id ${token.userId}`, { cause: error });
    throw error;
  }
}

/**
 * Records a use of the token (by id or by hash) unless one was recorded since `notBefore`, or it
 * has expired. The condition is in the statement, so that concurrent requests of one token write
 * it once. The publish statement runs the same (server/policy/publish.ts).
 */
export function touchTokenSql(by: { id: string } | { tokenHash: string }, now: Date, notBefore: Date): BoundSql {
  const [column, value] = 'id' in by ? ['id', by.id] : ['token_hash', by.tokenHash];
  return {
    sql: `update tokens set last_used_at = ? where ${column} = ? and (expires_at is null or expires_at > ?) and (last_used_at is null or last_used_at <= ?)`,
    values: [now, value, now, notBefore],
  };
}

/** Runs touchTokenSql. */
export async function touchToken(db: Db, by: { id: string } | { tokenHash: string }, now: Date, notBefore: Date): Promise<void> {
  const { sql, values } = touchTokenSql(by, now, notBefore);
  await db.raw(sql, values as Knex.RawBinding[]);
}

/** The hashes of a user's tokens, their rows locked (a revocation of one waits, or has finished). */
export async function lockTokenHashesOfUser(db: Knex.Transaction, userId: string): Promise<string[]> {
  const rows = await db('tokens').select('token_hash').where({ user_id: userId }).forUpdate();
  return rows.map((r: { token_hash: string }) => String(r.token_hash));
}

/** Deletes every token of a user (their rows locked first by lockTokenHashesOfUser). */
export async function deleteTokensOfUser(db: Knex.Transaction, userId: string): Promise<void> {
  await db('tokens').where({ user_id: userId }).delete();
}

/** Deletes a token; returns its hash, or undefined when there was none. */
export async function deleteToken(db: Knex.Transaction, id: string): Promise<string | undefined> {
  const row = await db('tokens').select('token_hash').where({ id }).forUpdate().first();
  if (!row) return undefined;
  await db('tokens').where({ id }).delete();
  return String(row.token_hash);
}

/** Deletes the tokens a trusted publisher's exchanges made; returns their hashes (the rows locked first). */
export async function deleteTokensOfPublisher(db: Knex.Transaction, publisherId: string): Promise<string[]> {
  const rows = await db('tokens').select('token_hash').where({ publisher_id: publisherId }).forUpdate();
  if (rows.length > 0) await db('tokens').where({ publisher_id: publisherId }).delete();
  return rows.map((r: { token_hash: string }) => String(r.token_hash));
}

/** Deletes a user's oidc tokens that expired before `before` (they are refused by their expiry anyway). */
export async function deleteExpiredOidcTokens(db: Db, userId: string, before: Date): Promise<void> {
  await db('tokens').where({ user_id: userId, kind: 'oidc' }).andWhere('expires_at', '<', before).delete();
}
