// Server settings: startup arguments win over REPO_MAN_* variables, which win over defaults (docs/api.md, "Configuration").
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AppError } from '../common/errors.js';
import { passwordProblem } from '../common/schemas/users.js';
import { closest } from '../common/suggest.js';
import { type DbKind, KINDS, KIND_NAMES } from './db/dialects/kinds.js';
import { SETTINGS, type Setting } from './settings.js';
import { parseDurations, parseNetworks } from './webhooks/settings.js';

export type { DbKind };

export interface ServerConfig {
  db: {
    kind: DbKind;
    /** Driver module name (`pg` for PostgreSQL, `mysql2` for MariaDB and MySQL). */
    driver: string;
    /** A folder searched for driver modules before the bundled ones. */
    driverPath?: string;
    host: string;
    port: number;
    user: string;
    password: string;
    database: string;
    /** Embedded database folder; `memory://` keeps it in memory (tests). */
    dataDir: string;
    /** How long opening a connection to PostgreSQL may take. */
    connectTimeoutMs: number;
    /** How long one statement may run, on the server and, a little later, on the client side. */
    statementTimeoutMs: number;
    /**
     * The read endpoint (PostgreSQL only): a replica, or a proxy to the replicas, with the same
     * login and database. Reads go there while it is at most `maxLagMs` behind (server/db/replica.ts).
     */
    read?: { host: string; port: number; maxLagMs: number };
  };
  /** Address to listen on; undefined: every interface. */
  host?: string;
  port: number;
  jwt: { secret?: string; ttlSeconds: number; issuer: string };
  /** The first administrator's password; when set it need not be changed. */
  adminPassword?: string;
  /** A first start without adminPassword is refused (the image: nobody may take over the documented one). */
  requireAdminPassword: boolean;
  searchPublic: boolean;
  bcryptCost: number;
  /** Proxies in front that add to X-Forwarded-For: the client is the N-th entry from the right (0: the socket's address). */
  trustProxy: number;
  metrics: boolean;
  logLevel: string;
  /** What the operator should know at start (secrets given where other users can read them). */
  warnings: string[];
  /** Processes serving requests (node:cluster); more than one only on a database server. */
  workers: number;
  /** Events (docs/webhooks.md): days an event is kept. */
  events: { days: number };
  /** Webhooks (docs/webhooks.md). */
  webhooks: {
    /** Waits before each retry of a webhook delivery, in milliseconds. */
    retrySchedule: number[];
    /** CIDR networks a webhook may reach though the address rules refuse them. */
    allowNetworks: string[];
  };
  /** The audit log (docs/webhooks.md, "Audit log"): days an entry is kept. */
  audit: { days: number };
  /** Days a deleted record stays restorable in the trash. */
  trashDays: number;
  /** The UTC time of day enabled retention policies run, as minutes after midnight. */
  retentionAtMinutes: number;
  /** Versions that never come back with other content (docs/retention.md, "Immutable versions"). */
  immutableVersions?: RegExp;
  /** Trusted publishing (docs/api.md, "Trusted publishing"). */
  oidc: {
    /** The `aud` an ID token must name when its publisher names no other. */
    audience: string;
    /** How long an exchanged project token is valid. */
    tokenMinutes: number;
    /** CIDR networks where issuers may be though the address rules refuse them (http allowed there). */
    allowNetworks: string[];
  };
}


type SettingName = keyof typeof SETTINGS;

/** Settings that are secrets: as startup arguments, every local user sees them in `ps`. */
const SECRETS: SettingName[] = ['dbPassword', 'jwtSecret', 'adminPassword'];

/** Driver names the older Java service documented (JDBC classes), mapped to their Node modules. */
const DRIVER_ALIASES: Record<string, string> = {
  'org.postgresql.Driver': 'pg',
  'org.mariadb.jdbc.Driver': 'mysql2',
  'com.mysql.cj.jdbc.Driver': 'mysql2',
  'com.mysql.jdbc.Driver': 'mysql2',
};
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function usage(message: string): AppError {
  return new AppError('usage', message);
}

function parseArgs(args: string[]): Map<string, string> {
  const known = new Map(Object.values(SETTINGS).map((s) => [s.arg, s]));
  const values = new Map<string, string>();
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const m = /^--([A-Za-z0-9_]+)(?:=(.*))?$/s.exec(arg);
    if (!m) throw usage(`unexpected argument "${arg}": settings look like --repoadmin_db_host VALUE`);
    const name = m[1]!;
    if (!known.has(name)) {
      const close = closest(name, [...known.keys()]);
      throw usage(`unknown setting --${name}${close ? ` (did you mean --${close}?)` : ''}; see repoadmin server --help`);
    }
    let value = m[2];
    if (value === undefined) {
      value = args[i + 1];
      if (value === undefined || value.startsWith('--')) throw usage(`--${name} needs a value`);
      i++;
    }
    if (value === '') throw usage(`--${name} needs a value`);
    values.set(name, value);
  }
  return values;
}

/** The first password from REPO_MAN_ADMIN_PASSWORD_FILE: the file's text without its final line break. */
function readAdminPasswordFile(file: { value: string; source: string } | undefined): { value: string; source: string } | undefined {
  if (!file) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file.value, 'utf8');
  } catch (error) {
    throw usage(`${file.source}: cannot read ${file.value} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  return { value: text.replace(/\r?\n$/, ''), source: `${file.source} (${file.value})` };
}

export function loadConfig(args: string[], env: NodeJS.ProcessEnv): ServerConfig {
  const argValues = parseArgs(args);

  const raw = (name: SettingName): { value: string; source: string } | undefined => {
    const setting: Setting = SETTINGS[name];
    const fromArg = argValues.get(setting.arg);
    if (fromArg !== undefined) return { value: fromArg, source: `--${setting.arg}` };
    for (const variable of setting.env) {
      const fromEnv = env[variable];
      if (fromEnv !== undefined && fromEnv !== '') return { value: fromEnv, source: variable };
    }
    return undefined;
  };
  const label = (name: SettingName) => {
    const s: Setting = SETTINGS[name];
    return `--${s.arg} / ${s.env.join(' / ')}`;
  };
  // Defaults come from SETTINGS, the list `repoadmin server --help` shows, unless computed here.
  const str = (name: SettingName, fallback: string = SETTINGS[name].default) => raw(name)?.value ?? fallback;
  const int = (name: SettingName, min: number, max: number, fallback = Number(SETTINGS[name].default)) => {
    const r = raw(name);
    if (!r) return fallback;
    const n = /^\d{1,9}$/.test(r.value) ? Number(r.value) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      throw usage(`${r.source} must be a whole number from ${min} to ${max}, not "${r.value}"`);
    }
    return n;
  };
  const bool = (name: SettingName) => {
    const r = raw(name);
    if (!r) return SETTINGS[name].default === 'true';
    const v = r.value.toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    throw usage(`${r.source} must be true or false, not "${r.value}"`);
  };

  /** REPO_MAN_TRUST_PROXY: a number of proxies; true means one, false none. */
  const proxies = () => {
    const r = raw('trustProxy');
    if (r && /^\d+$/.test(r.value.trim())) return int('trustProxy', 0, 10);
    return bool('trustProxy') ? 1 : 0;
  };

  const kindText = str('dbKind').toLowerCase();
  const kind = Object.hasOwn(KIND_NAMES, kindText) ? KIND_NAMES[kindText] : undefined;
  if (!kind) {
    throw usage(`unsupported database kind "${kindText}" (${label('dbKind')}); supported: ${Object.keys(KIND_NAMES).join(', ')}`);
  }
  const driverText = str('dbDriver', KINDS[kind].driver);
  const logLevel = str('logLevel').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) throw usage(`${label('logLevel')} must be one of ${LOG_LEVELS.join(', ')}`);

  const secret = raw('jwtSecret');
  if (secret && Buffer.byteLength(secret.value, 'utf8') < 32) {
    throw usage(`${secret.source} must be at least 32 bytes long (it signs every token); leave it unset to have one generated`);
  }
  const adminPassword = raw('adminPassword') ?? readAdminPasswordFile(raw('adminPasswordFile'));
  const adminProblem = adminPassword && passwordProblem(adminPassword.value);
  if (adminPassword && adminProblem) {
    throw usage(`${adminPassword.source} breaks the password rules: ${adminProblem}`);
  }
  const workers = int('workers', 1, 64);
  if (workers > 1 && KINDS[kind].embedded) {
    throw usage(`${label('workers')} needs a database server (PostgreSQL, MariaDB or MySQL): the embedded database can be open in one process only`);
  }
  const host = raw('host');
  if (host && !net.isIP(host.value) && !/^[A-Za-z0-9]([A-Za-z0-9.-]{0,252})$/.test(host.value)) {
    throw usage(`${host.source} must be an IP address or a host name, not "${host.value}"`);
  }
  const listed = <T>(name: SettingName, parse: (text: string) => T) => {
    const r = raw(name);
    try {
      return parse(r?.value ?? SETTINGS[name].default);
    } catch (error) {
      throw usage(`${r?.source ?? label(name)}: ${(error as Error).message}`);
    }
  };
  const retentionAt = raw('retentionAt');
  const clock = /^([01]\d|2[0-3]):([0-5]\d)$/.exec(retentionAt?.value ?? SETTINGS.retentionAt.default);
  if (!clock) throw usage(`${retentionAt!.source} must be a UTC time of day as HH:MM, e.g. 03:00, not "${retentionAt!.value}"`);
  const immutable = raw('immutableVersions');
  let immutableVersions: RegExp | undefined;
  try {
    immutableVersions = immutable && new RegExp(immutable.value, 'u');
  } catch {
    throw usage(`${immutable!.source} must be a regular expression (JavaScript syntax), e.g. ^(?!.*-SNAPSHOT$); "${immutable!.value}" is not one`);
  }
  const readHost = raw('dbReadHost');
  if (readHost && !KINDS[kind].readReplicas) throw usage(`${readHost.source} needs PostgreSQL (${label('dbKind')}=postgres): read replicas of ${kind} are not supported`);
  const dbPort = int('dbPort', 1, 65535, KINDS[kind].defaultPort);
  const read = readHost && { host: readHost.value, port: int('dbReadPort', 1, 65535, dbPort), maxLagMs: int('dbReadMaxLag', 0, 3_600_000) };
  const dataHome = env.XDG_DATA_HOME || path.join(env.HOME || os.homedir(), '.local', 'share');

  return {
    db: {
      kind,
      driver: DRIVER_ALIASES[driverText] ?? driverText,
      driverPath: raw('dbDriverPath')?.value,
      host: str('dbHost'),
      port: dbPort,
      user: str('dbUser'),
      // REPO_MAN_DB_PASS set but empty: no password (MariaDB's root on a development machine).
      password: str('dbPassword', env.REPO_MAN_DB_PASS === '' ? '' : SETTINGS.dbPassword.default),
      database: str('dbDatabase'),
      dataDir: str('dataDir', path.join(dataHome, 'repoadmin')),
      connectTimeoutMs: int('dbConnectTimeout', 1, 600) * 1000,
      statementTimeoutMs: int('dbStatementTimeout', 1, 3600) * 1000,
      ...(read ? { read } : {}),
    },
    host: host?.value,
    port: int('port', 0, 65535),
    jwt: {
      secret: secret?.value,
      ttlSeconds: int('jwtTtl', 1, 366 * 24 * 3600),
      issuer: str('jwtIssuer'),
    },
    adminPassword: adminPassword?.value,
    requireAdminPassword: bool('requireAdminPassword'),
    searchPublic: bool('searchPublic'),
    // bcrypt allows 31, but each step doubles the time: 18 already takes about 16 s a hash here.
    bcryptCost: int('bcryptCost', 4, 18),
    trustProxy: proxies(),
    metrics: bool('metrics'),
    logLevel,
    workers,
    events: { days: int('eventsDays', 1, 3650) },
    webhooks: {
      retrySchedule: listed('webhookRetrySchedule', parseDurations),
      allowNetworks: raw('webhookAllowNetworks') ? listed('webhookAllowNetworks', parseNetworks) : [],
    },
    audit: { days: int('auditDays', 1, 36500) },
    trashDays: int('trashDays', 1, 3650),
    retentionAtMinutes: Number(clock[1]) * 60 + Number(clock[2]),
    immutableVersions,
    oidc: {
      audience: str('oidcAudience'),
      tokenMinutes: int('oidcTokenMinutes', 1, 60),
      allowNetworks: raw('oidcAllowNetworks') ? listed('oidcAllowNetworks', parseNetworks) : [],
    },
    warnings: SECRETS.filter((name) => argValues.has(SETTINGS[name].arg)).map(
      (name) => `--${SETTINGS[name].arg} is visible to every local user (ps, /proc): set ${SETTINGS[name].env[0]} in the environment instead`,
    ),
  };
}
