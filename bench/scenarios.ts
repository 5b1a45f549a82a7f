// What is measured: four requests of the API, each with the same work done straight against the
// database. The SQL comes from the server's own query builders and request schemas, so it is the
// SQL the server runs for that request.
import knexFactory, { type Knex } from 'knex';
import {
  LatestQuery,
  SearchQuery,
  SearchRequest,
  VersionRecord,
  paging,
  searchFilters,
} from '../common/schemas/repositories.js';
import { randomBytes } from 'node:crypto';
import { createPasswords } from '../server/auth/passwords.js';
import { tokenSettings } from '../server/auth/tokens.js';
import type pg from 'pg';
import { publishStatement } from '../server/db/dialects/postgres.js';
import { COORDINATE_COLUMNS, countQuery, latestQuery, pageQuery, publishKey, toRow } from '../server/db/versions.js';
import { generateToken } from '../server/services/auth.js';
import type { Services } from '../server/services/context.js';
import type { SignedCredential } from '../server/services/access.js';
import { hashProjectToken } from '../server/auth/project-tokens.js';
import jwt from 'jsonwebtoken';
import { publish, storedFields } from '../server/services/versions.js';
import { ARTIFACTS, keyOf, publishedRecord } from './dataset.js';
import type { HttpRequest } from './load.js';

/** Build SQL only; never connect. MariaDB/MySQL's is made when first asked for. */
const pgBuilder = knexFactory({ client: 'pg' });
let mysqlBuilder: Knex | undefined;

export type SqlDialect = 'postgres' | 'mysql';

function builderFor(dialect: SqlDialect): Knex {
  if (dialect === 'postgres') return pgBuilder;
  mysqlBuilder ??= knexFactory({ client: 'mysql2' });
  return mysqlBuilder;
}

export interface Statement {
  label: string;
  sql: string;
  bindings: readonly unknown[];
}

/** The database under the server, reached without HTTP or Koa. */
export interface DirectDatabase {
  /** One statement as the driver sends it. */
  query(sql: string, bindings: readonly unknown[]): Promise<unknown>;
  /** A knex of the server's own setup on the same database: publishing is a transaction of several statements. */
  knex: Knex;
}

export type ScenarioId = 'search-group' | 'latest' | 'search-branch' | 'publish' | 'publish-token' | 'login';

/** The credentials of a run: an administrator's session token (JWT) and project token (`rpa_...`). */
export interface BenchAuth {
  jwt: string;
  projectToken: string;
}

/** Users the login scenario takes turns with, so that no name has many logins in flight at once (the per-name limit). */
export const LOGIN_USERS = 16;
export const LOGIN_PASSWORD = `bench-login-${randomBytes(6).toString('base64url')}`;
export const loginUser = (i: number) => `bench-login-${i % LOGIN_USERS}`;
/** The server's default bcrypt cost: what a pipeline logging in with a password costs it. */
const BCRYPT_COST = 12;

export interface Scenario {
  id: ScenarioId;
  name: string;
  /** The HTTP request, with an administrator's credentials. */
  request(auth: BenchAuth): HttpRequest;
  /** The queries of one request, for EXPLAIN; none for publishing. */
  statements: Statement[];
  /** One request's worth of database work, the way the server does it. */
  direct(db: DirectDatabase, i: number, auth: BenchAuth): Promise<unknown>;
  /** Only these concurrencies (default: every one asked for). */
  connections?: number[];
  /** Never interleaved with others: a request can outlast a turn and would load the next scenario's. */
  alone?: boolean;
}

/** The artifact the searches and the latest lookup ask for: one on `main` (keys below ARTIFACTS are on main). */
const TARGET = keyOf(Math.floor(ARTIFACTS * 0.617));

function native(label: string, query: Knex.QueryBuilder): Statement {
  const { sql, bindings } = query.toSQL().toNative();
  return { label, sql, bindings };
}

function searchScenario(builder: Knex, id: ScenarioId, name: string, body: Record<string, unknown>, queryString: string): Scenario {
  const filters = searchFilters(SearchRequest.parse(body));
  const page = paging(SearchQuery.parse(Object.fromEntries(new URLSearchParams(queryString))));
  const statements = [native('page', pageQuery(builder, filters, page)), native('count', countQuery(builder, filters))];
  return {
    id,
    name,
    request: () => ({
      method: 'POST',
      path: `/v1/repositories/search${queryString ? `?${queryString}` : ''}`,
      body: JSON.stringify(body),
    }),
    statements,
    // The server runs the page and its count at once, on two connections.
    direct: (db) => Promise.all(statements.map((s) => db.query(s.sql, s.bindings))),
  };
}

function latestScenario(builder: Knex): Scenario {
  const key = { groupId: TARGET.groupId, artifactId: TARGET.artifactId, branch: TARGET.branch };
  const statement = native('latest', latestQuery(builder, LatestQuery.parse(key)));
  return {
    id: 'latest',
    name: 'latest of one key',
    request: () => ({ method: 'GET', path: `/v1/repositories/latest?${new URLSearchParams(key)}` }),
    statements: [statement],
    direct: (db) => db.query(statement.sql, statement.bindings),
  };
}


function publishScenario(): Scenario {
  return {
    id: 'publish',
    name: 'publish (half latest)',
    request: (auth) => ({
      method: 'POST',
      path: '/v1/repositories',
      headers: { authorization: `Bearer ${auth.jwt}` },
      body: (i) => JSON.stringify(publishedRecord(i)),
    }),
    statements: [],
    // The server's publish service minus HTTP, authentication and logging: it needs only the database and the clock.
    direct: (db, i, auth) => {
      const claims = jwt.decode(auth.jwt) as { uid: string; sub: string; tv: number };
      const credential: SignedCredential = { kind: 'session', userId: claims.uid, username: claims.sub, tokenVersion: claims.tv };
      return publish({ db: db.knex, now: () => new Date() } as Services, credential, VersionRecord.parse(publishedRecord(i)));
    },
  };
}

/** The same publishing with a project token: its lookup by SHA-256 replaces the JWT check. */
function publishTokenScenario(): Scenario {
  return {
    id: 'publish-token',
    name: 'publish with a project token',
    request: (auth) => ({
      method: 'POST',
      path: '/v1/repositories',
      headers: { authorization: `Bearer ${auth.projectToken}` },
      body: (i) => JSON.stringify(publishedRecord(i)),
    }),
    statements: [],
    // The token's lookup (and its once-a-minute last use) and the publish service, without HTTP.
    direct: async (db, i, auth) => {
      const s = { db: db.knex, now: () => new Date() } as Services;
      return publish(s, { kind: 'project', tokenHash: hashProjectToken(auth.projectToken) }, VersionRecord.parse(publishedRecord(i)));
    },
  };
}

let loginServices: Services | undefined;

/** A pipeline step that logs in with a password first: generate-token, one bcrypt comparison at the default cost. */
function loginScenario(): Scenario {
  return {
    id: 'login',
    name: 'log in with a password (bcrypt 12)',
    // One at a time: concurrent bcrypt comparisons only queue behind each other on the server's cores.
    connections: [1],
    alone: true,
    request: () => ({
      method: 'POST',
      path: '/v1/authentication/generate-token',
      body: (i) => JSON.stringify({ username: loginUser(i), password: LOGIN_PASSWORD }),
    }),
    statements: [],
    // The server's generate-token service without HTTP: the login limits' statements and the bcrypt comparison.
    direct: (db, i) => {
      loginServices ??= {
        db: db.knex,
        now: () => new Date(),
        passwords: createPasswords(BCRYPT_COST),
        tokens: tokenSettings(randomBytes(32).toString('hex'), 'repoadmin', 3600),
      } as Services;
      return generateToken({ ...loginServices, db: db.knex }, { username: loginUser(i), password: LOGIN_PASSWORD }, 'bench');
    },
  };
}

/** What storedFields reads of the services: the clock, for a record without its own creation date. */
const DIRECT = { now: () => new Date() } as Services;

/**
 * The server's publish on PostgreSQL (server/db/versions.ts, dialects/postgres.ts) sent straight
 * through a `pg` pool as a named prepared statement: the same statement, built by the server's
 * `publishStatement` (which takes the key's lock and, for a latest record, clears the key's other
 * latest flag, then inserts or replaces the record), one per record, on this side of the measurement.
 */
export function publishThroughPg(pool: pg.Pool, i: number): Promise<pg.QueryResult> {
  return publishBodyThroughPg(pool, publishedRecord(i));
}

/** The same for a publish request's parsed body (bench/minimal.ts answers publishing with it). */
export async function publishBodyThroughPg(pool: pg.Pool, body: unknown): Promise<pg.QueryResult> {
  const record = VersionRecord.parse(body);
  const fields = storedFields(DIRECT, record);
  const { sql, bindings } = publishStatement(toRow(fields), COORDINATE_COLUMNS, publishKey(fields), fields.latestVersion);
  const native = pgBuilder.raw(sql, bindings as Knex.RawBinding[]).toSQL().toNative();
  return pool.query({ name: 'bench_publish', text: native.sql, values: [...native.bindings] });
}

/** The scenarios, their SQL written for this dialect. */
export function scenarios(dialect: SqlDialect = 'postgres'): Scenario[] {
  const builder = builderFor(dialect);
  return [
    searchScenario(
      builder,
      'search-group',
      'search group+artifact, latest',
      { groupId: TARGET.groupId, artifactId: TARGET.artifactId, latestVersion: true },
      '',
    ),
    latestScenario(builder),
    searchScenario(builder, 'search-branch', 'search branch by version, page 50', { branch: TARGET.branch }, 'page=50&size=20&sortField=version'),
    publishScenario(),
    publishTokenScenario(),
    loginScenario(),
  ];
}

export async function closeBuilder(): Promise<void> {
  await pgBuilder.destroy();
  await mysqlBuilder?.destroy();
}
