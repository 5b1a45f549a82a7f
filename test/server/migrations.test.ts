// Migrations: all up, all down, all up again, on an empty database of each kind.
import { describe, expect, it } from 'vitest';
import { migrateLatest, openDatabase } from '../../server/db/connect.js';
import { MIGRATION_CONFIG } from '../../server/db/migrations/index.js';
import type { DbKind } from '../../server/config.js';
import { createTestDatabase, dbKinds } from '../helpers/db.js';

const TABLES = ['audit', 'deliveries', 'environment_current', 'environments', 'event_sequence', 'events', 'immutable_versions', 'latest_keys', 'login_attempts', 'promotions', 'retention_policies', 'retention_runs', 'revoked_tokens', 'schedule_leases', 'settings', 'tokens', 'trusted_publishers', 'used_id_tokens', 'users', 'version_counts', 'versions', 'versions_trash', 'webhooks'];

type Db = Awaited<ReturnType<typeof openDatabase>>['db'];

/** Names from the catalogue: PostgreSQL's, or MariaDB/MySQL's information_schema. */
async function names(db: Db, kind: DbKind, postgres: string, mysql: string): Promise<string[]> {
  if (kind === 'mysql') {
    const [rows] = await db.raw(mysql);
    return (rows as { name: string }[]).map((r) => r.name);
  }
  return ((await db.raw(postgres)).rows as { name: string }[]).map((r) => r.name);
}

async function tables(db: Db, kind: DbKind): Promise<string[]> {
  const all = await names(
    db,
    kind,
    "select tablename as name from pg_tables where schemaname = 'public' order by tablename",
    'select table_name as name from information_schema.tables where table_schema = database() order by table_name',
  );
  return all.filter((t) => !t.startsWith('knex_')).sort();
}

function versionIndexes(db: Db, kind: DbKind): Promise<string[]> {
  return names(
    db,
    kind,
    "select indexname as name from pg_indexes where tablename = 'versions' order by indexname",
    "select distinct index_name as name from information_schema.statistics where table_schema = database() and table_name = 'versions' order by index_name",
  );
}

describe.each(dbKinds())('migrations on %s', (kind) => {
  it('run all up, all down and all up again', async () => {
    const database = await createTestDatabase(kind);
    const opened = await openDatabase(database.settings);
    try {
      const { db } = opened;
      expect(await tables(db, kind)).toEqual([]);
      await db.migrate.latest(MIGRATION_CONFIG);
      expect(await tables(db, kind)).toEqual(TABLES);
      expect(await versionIndexes(db, kind)).toEqual(
        expect.arrayContaining(['versions_one_latest', 'versions_coordinates_unique', 'versions_group_artifact', 'versions_branch_version']),
      );
      if (kind === 'mysql') {
        // Exact, case-sensitive matching and byte order: a binary collation on every text column.
        const collations = await names(
          db,
          kind,
          '',
          "select distinct collation_name as name from information_schema.columns where table_schema = database() and table_name not like 'knex\\_%' and collation_name is not null",
        );
        expect(collations.filter((c) => !/_bin$/.test(c))).toEqual([]);
      }
      expect(
        await names(
          db,
          kind,
          "select indexname as name from pg_indexes where tablename = 'tokens' order by indexname",
          "select distinct index_name as name from information_schema.statistics where table_schema = database() and table_name = 'tokens' order by index_name",
        ),
      ).toEqual(expect.arrayContaining(['tokens_token_hash_unique', 'tokens_user_name_unique']));
      // Deleting a user deletes its tokens: the foreign key cascades.
      expect(
        await names(
          db,
          kind,
          "select confdeltype::text as name from pg_constraint where conrelid = 'tokens'::regclass and confrelid = 'users'::regclass and contype = 'f'",
          "select delete_rule as name from information_schema.referential_constraints where constraint_schema = database() and table_name = 'tokens' and referenced_table_name = 'users'",
        ),
      ).toEqual([kind === 'mysql' ? 'CASCADE' : 'c']);
      await db.migrate.rollback(MIGRATION_CONFIG, true);
      expect(await tables(db, kind)).toEqual([]);
      await db.migrate.latest(MIGRATION_CONFIG);
      expect(await tables(db, kind)).toEqual(TABLES);
      const [, pending] = await db.migrate.list(MIGRATION_CONFIG);
      expect(pending).toEqual([]);
    } finally {
      await opened.close();
      await database.drop();
    }
  });
});

/** What the schema is made of, from the catalogue: columns, indexes, constraints and triggers. */
async function schemaOf(db: Db, kind: DbKind): Promise<string[]> {
  if (kind === 'mysql') {
    const queries = [
      "select concat_ws(' ', table_name, column_name, column_type, is_nullable, column_default, collation_name, generation_expression) as name from information_schema.columns where table_schema = database()",
      "select concat_ws(' ', table_name, index_name, non_unique, seq_in_index, column_name) as name from information_schema.statistics where table_schema = database()",
      "select concat_ws(' ', table_name, constraint_name, delete_rule) as name from information_schema.referential_constraints where constraint_schema = database()",
      // By the table's schema (the same as the trigger's): MariaDB looks that one up, but reads
      // `trigger_schema = database()` by loading every database's triggers, and while it loads
      // another database's its session shows that database as its own, which a test dropping that
      // database at the time ends (test/helpers/db.ts, dropMysqlDatabase).
      "select concat_ws(' ', trigger_name, action_timing, event_manipulation) as name from information_schema.triggers where event_object_schema = database()",
    ];
    const all = await Promise.all(queries.map((q) => names(db, kind, '', q)));
    return all.flat().sort();
  }
  const queries = [
    "select concat_ws(' ', table_name, column_name, data_type, is_nullable, column_default, collation_name) as name from information_schema.columns where table_schema = 'public'",
    "select indexdef as name from pg_indexes where schemaname = 'public'",
    "select conname || ' ' || pg_get_constraintdef(oid) as name from pg_constraint where connamespace = 'public'::regnamespace",
    "select tgname as name from pg_trigger where not tgisinternal",
    "select proname as name from pg_proc where pronamespace = 'public'::regnamespace",
  ];
  const all = await Promise.all(queries.map((q) => names(db, kind, q, '')));
  return all.flat().sort();
}

/**
 * A statement that changes the schema or the data: stopping before a read, a savepoint or a commit
 * is the same as stopping before the next change.
 */
function changes(args: unknown[]): boolean {
  const sql = (args[1] as { sql?: string } | undefined)?.sql ?? '';
  return /^\s*(create|alter|drop|insert|update|delete)\b/i.test(sql);
}

/** The statement limit of each database being stopped, by its name. */
const limits = new Map<string | undefined, { allowed: number; statements: number }>();
let unpatched: (() => void) | undefined;

/**
 * Lets the first `allowed` changing statements on this knex instance's database (its migrator's and
 * transactions' clients included) through and fails every statement after them, as a connection
 * does when its process is killed: nothing more reaches the database, not even knex's rollback or
 * the release of its lock row. knex makes those clients from the client's class, not from the
 * instance, so the class is patched (once, while any database is being stopped) and each call
 * finds its limit by the name of the database it connects to.
 */
function stopAfter(db: Db, allowed: number): { count: () => number; restore: () => void } {
  if (!unpatched) {
    const proto = Object.getPrototypeOf(db.client) as { query: (...args: unknown[]) => Promise<unknown> };
    const own = Object.prototype.hasOwnProperty.call(proto, 'query');
    const original = proto.query;
    proto.query = function (this: { connectionSettings?: { database?: string } }, ...args: unknown[]) {
      const limit = limits.get(this.connectionSettings?.database);
      if (limit && limit.statements >= limit.allowed) return Promise.reject(new Error('stopped here'));
      if (limit && changes(args)) limit.statements++;
      return original.apply(this, args);
    };
    unpatched = () => {
      if (own) proto.query = original;
      else delete (proto as { query?: unknown }).query;
      unpatched = undefined;
    };
  }
  const limit = { allowed, statements: 0 };
  const database = (db.client as { connectionSettings: { database: string } }).connectionSettings.database;
  limits.set(database, limit);
  return {
    count: () => limit.statements,
    restore: () => {
      limits.delete(database);
      if (limits.size === 0) unpatched?.();
    },
  };
}

/** Runs `work` for each of `items`, at most `width` at a time. */
async function inParallel<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: width }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  }));
}

describe.each(dbKinds().filter((kind) => kind !== 'pglite'))('a first start stopped at any statement on %s', (kind) => {
  it('is completed by the next start, whichever statement it was stopped at', { timeout: 600_000 }, async () => {
    async function fresh<T>(work: (db: Db) => Promise<T>): Promise<T> {
      const database = await createTestDatabase(kind);
      const opened = await openDatabase(database.settings);
      try {
        return await work(opened.db);
      } finally {
        await opened.close().catch(() => undefined);
        await database.drop();
      }
    }
    const { reference, total } = await fresh(async (db) => {
      const counter = stopAfter(db, Number.POSITIVE_INFINITY);
      try {
        await migrateLatest(db);
      } finally {
        counter.restore();
      }
      return { reference: await schemaOf(db, kind), total: counter.count() };
    });
    expect(reference.join('\n')).toContain('versions_one_latest');
    // Every migration's statements are counted (a count of none would test nothing).
    expect(total).toBeGreaterThan(50);
    // Every stopping point on a database of its own, a few at once: the database server works on
    // several databases' schema changes at the same time.
    const points = Array.from({ length: total - 1 }, (_, i) => i + 1);
    await inParallel(points, 4, async (allowed) => {
      const database = await createTestDatabase(kind);
      try {
        const first = await openDatabase(database.settings);
        const stop = stopAfter(first.db, allowed);
        try {
          // Stopped before its last statement, the start fails; stopped after it, only the release
          // of the lock fails, which the server's end would also take away.
          await migrateLatest(first.db).catch(() => undefined);
        } finally {
          stop.restore();
          // The first start's connections are gone with it: the lock it held goes with them.
          await first.close().catch(() => undefined);
        }
        const next = await openDatabase(database.settings);
        try {
          await migrateLatest(next.db);
          expect({ allowed, schema: await schemaOf(next.db, kind) }).toEqual({ allowed, schema: reference });
          const [, pending] = await next.db.migrate.list(MIGRATION_CONFIG);
          expect(pending).toEqual([]);
        } finally {
          await next.close();
        }
      } finally {
        await database.drop();
      }
    });
  });
});
