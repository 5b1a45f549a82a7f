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
import { countQuery, latestQuery, pageQuery } from '../server/db/versions.js';
import type { Actor, Services } from '../server/services/context.js';
import { publish } from '../server/services/versions.js';
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

export type ScenarioId = 'search-group' | 'latest' | 'search-branch' | 'publish';

export interface Scenario {
  id: ScenarioId;
  name: string;
  /** The HTTP request; `token` is an administrator's bearer token. */
  request(token: string): HttpRequest;
  /** The queries of one request, for EXPLAIN; none for publishing. */
  statements: Statement[];
  /** One request's worth of database work, the way the server does it. */
  direct(db: DirectDatabase, i: number): Promise<unknown>;
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

const ADMIN: Actor = { userId: 'bench', username: 'admin', role: 'ROLE_ADMIN', projectName: null, mustChangePassword: false };

function publishScenario(): Scenario {
  return {
    id: 'publish',
    name: 'publish (half latest)',
    request: (token) => ({
      method: 'POST',
      path: '/v1/repositories',
      headers: { authorization: `Bearer ${token}` },
      body: (i) => JSON.stringify(publishedRecord(i)),
    }),
    statements: [],
    // The server's publish service minus HTTP, authentication and logging: it needs only the database and the clock.
    direct: (db, i) =>
      publish({ db: db.knex, now: () => new Date() } as Services, ADMIN, VersionRecord.parse(publishedRecord(i))),
  };
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
  ];
}

export async function closeBuilder(): Promise<void> {
  await pgBuilder.destroy();
  await mysqlBuilder?.destroy();
}
