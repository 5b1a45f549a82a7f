// What is measured: requests of the API, each with the same work done straight against the
// database. The SQL comes from the server's own query writers and request schemas, so it is the
// SQL the server runs for that request.
import type { Knex } from 'knex';
import {
  LatestQuery,
  SearchQuery,
  SearchRequest,
  VersionRecord,
  paging,
  searchFilters,
} from '../common/schemas/repositories.js';
import { randomBytes, randomUUID } from 'node:crypto';
import { createPasswords } from '../server/auth/passwords.js';
import { tokenSettings } from '../server/auth/tokens.js';
import type pg from 'pg';
import { hashProjectToken } from '../server/auth/project-tokens.js';
import type { SqlForm } from '../server/db/dialects/index.js';
import { mysqlDialect } from '../server/db/dialects/mysql.js';
import { postgresDialect, postgresSql, publishStatement } from '../server/db/dialects/postgres.js';
import { COORDINATE_COLUMNS, type ShapedQuery, countQuery, latestQuery, pageQuery, publishKey, toRow } from '../server/db/versions.js';
import { generateToken } from '../server/services/auth.js';
import type { Services } from '../server/services/context.js';
import type { SignedCredential } from '../server/services/context.js';
import { publish, storedFields } from '../server/services/versions.js';
import { ARTIFACTS, LONG_HISTORY_KEY, keyOf, publishedRecord } from './dataset.js';
import type { HttpRequest } from './load.js';
import { loadConfig } from '../server/config.js';
import type { AuditEntry } from '../server/db/audit.js';
import { publishPrecondition } from '../server/policy/publish.js';
import { publishTarget } from '../server/routes/v1/repositories.js';

export type SqlDialect = 'postgres' | 'mysql';

const FORMS: Record<SqlDialect, SqlForm> = { postgres: postgresDialect, mysql: mysqlDialect };

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

export type ScenarioId = 'search-group' | 'latest' | 'search-branch' | 'latest-long' | 'search-long' | 'publish' | 'publish-token' | 'login';

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

function native(label: string, form: SqlForm, query: ShapedQuery): Statement {
  return { label, sql: form.native(query.build()), bindings: query.values };
}

function searchScenario(form: SqlForm, id: ScenarioId, name: string, body: Record<string, unknown>, queryString: string): Scenario {
  const filters = searchFilters(SearchRequest.parse(body));
  const page = paging(SearchQuery.parse(Object.fromEntries(new URLSearchParams(queryString))));
  const statements = [native('page', form, pageQuery(form, filters, page)), native('count', form, countQuery(form, filters))];
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

function latestScenario(form: SqlForm, id: ScenarioId, name: string, target: { groupId: string; artifactId: string; branch: string }): Scenario {
  const key = { groupId: target.groupId, artifactId: target.artifactId, branch: target.branch };
  const statement = native('latest', form, latestQuery(form, LatestQuery.parse(key)));
  return {
    id,
    name,
    request: () => ({ method: 'GET', path: `/v1/repositories/latest?${new URLSearchParams(key)}` }),
    statements: [statement],
    direct: (db) => db.query(statement.sql, statement.bindings),
  };
}

/** The credential of a session token, as the server takes it once its signature is checked. */
function sessionOf(jwt: string): SignedCredential {
  const claims = JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString('utf8')) as { uid: string; sub: string; tv: number };
  return { kind: 'session', userId: claims.uid, username: claims.sub, tokenVersion: claims.tv };
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
    // The server's publish service minus HTTP, the token's signature and logging: it needs only the database and the clock.
    direct: (db, i, auth) => {
      const record = VersionRecord.parse(publishedRecord(i));
      return publish({ db: db.knex, config: BENCH_CONFIG, now: () => new Date() } as Services, sessionOf(auth.jwt), record, publishEntry(record, 'session', BENCH_ADDRESS));
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
    // The token's hash and the publish service (which checks the token and records its use), without HTTP.
    direct: (db, i, auth) => {
      const credential: SignedCredential = { kind: 'project', tokenHash: hashProjectToken(auth.projectToken) };
      const record = VersionRecord.parse(publishedRecord(i));
      return publish({ db: db.knex, config: BENCH_CONFIG, now: () => new Date() } as Services, credential, record, publishEntry(record, 'token', BENCH_ADDRESS));
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
/** The server's defaults: what the publish path reads of its configuration (immutable versions: none). */
const BENCH_CONFIG = loadConfig([], {});

/** The address the benchmark's requests come from. */
const BENCH_ADDRESS = '127.0.0.1';

/** The audit entry the server writes with a publish of `record` (server/http/pipeline.ts, auditEntry), with a new request id. */
function publishEntry(record: VersionRecord, via: 'session' | 'token', address: string): AuditEntry {
  return { via, action: 'version.published', target: publishTarget(record), outcome: 'ok', address, requestId: randomUUID() };
}

/**
 * Who a publish statement publishes as: a session token's claims (read, not verified) and the
 * request's address. With one, the statement is the server's for a publish request: the record
 * with the caller's check and the request's audit entry. Without, the record alone (the floor of
 * the runs before the entry went into the statement).
 */
export interface PublishCaller {
  jwt: string;
  address: string;
}

/**
 * The server's publish on PostgreSQL (server/db/versions.ts, dialects/postgres.ts) sent straight
 * through a `pg` pool as a named prepared statement: the same statement, built by the server's
 * `publishStatement` (which checks the caller, takes the key's lock and, for a latest record,
 * clears the key's other latest flag, then inserts or replaces the record and writes the request's
 * audit entry), one per record, on this side of the measurement.
 */
export function publishThroughPg(pool: pg.Pool, i: number, caller?: PublishCaller): Promise<pg.QueryResult> {
  return publishBodyThroughPg(pool, publishedRecord(i), caller);
}

/** The same for a publish request's parsed body (bench/minimal.ts answers publishing with it). */
export async function publishBodyThroughPg(pool: pg.Pool, body: unknown, caller?: PublishCaller): Promise<pg.QueryResult> {
  const record = VersionRecord.parse(body);
  const fields = storedFields(DIRECT, record);
  const precondition = caller && publishPrecondition(sessionOf(caller.jwt), record.projectName, new Date());
  const audit = caller && publishEntry(record, 'session', caller.address);
  const { shape, values, build } = publishStatement(toRow(fields), COORDINATE_COLUMNS, publishKey(fields), fields.latestVersion, precondition, undefined, audit);
  let statement = publishStatements.get(shape);
  if (statement === undefined) publishStatements.set(shape, (statement = { name: `bench_publish_${publishStatements.size + 1}`, text: postgresSql.native(build()) }));
  const result = await pool.query({ ...statement, values });
  if (caller && result.rows.length === 0) throw new Error('the publish statement refused the caller');
  return result;
}

/** The publish statement by shape, built once as the server builds it (server/db/statements.ts). */
const publishStatements = new Map<string, { name: string; text: string }>();

/** The scenarios, their SQL written for this dialect. */
export function scenarios(dialect: SqlDialect = 'postgres'): Scenario[] {
  const form = FORMS[dialect];
  const long = LONG_HISTORY_KEY;
  return [
    searchScenario(
      form,
      'search-group',
      'search group+artifact, latest',
      { groupId: TARGET.groupId, artifactId: TARGET.artifactId, latestVersion: true },
      '',
    ),
    latestScenario(form, 'latest', 'latest of one key', TARGET),
    searchScenario(form, 'search-branch', 'search branch by version, page 50', { branch: TARGET.branch }, 'page=50&size=20&sortField=version'),
    latestScenario(form, 'latest-long', 'latest of a key with a long history', long),
    searchScenario(form, 'search-long', 'search latest of a long history', { groupId: long.groupId, artifactId: long.artifactId, latestVersion: true }, ''),
    publishScenario(),
    publishTokenScenario(),
    loginScenario(),
  ];
}
