// The server's settings as data: argument, variables, meaning and default. config.ts reads them;
// `repoadmin server --help` lists them, so this module imports nothing.

export interface Setting {
  arg: string;
  env: string[];
  /** What it sets, for `repoadmin server --help`. */
  about: string;
  /** The default as `repoadmin server --help` shows it. */
  default: string;
}

/** Every server setting: its argument, variables and default. `repoadmin server --help` lists these. */
export const SETTINGS = {
  dbKind: { arg: 'repoadmin_db_jdbc', env: ['REPO_MAN_DB_JDBC'], about: 'database kind: pglite (embedded), postgres, postgresql, mariadb or mysql', default: 'pglite' },
  dbDriver: { arg: 'repoadmin_db_driver', env: ['REPO_MAN_DB_DRIVER'], about: 'driver module of that kind', default: 'pg for postgres, mysql2 for mariadb and mysql' },
  dbDriverPath: { arg: 'repoadmin_db_driver_path', env: ['REPO_MAN_DB_DRIVER_PATH'], about: 'a folder with driver modules, searched first', default: 'none' },
  dbHost: { arg: 'repoadmin_db_host', env: ['REPO_MAN_DB_HOST'], about: 'database host or IP', default: 'localhost' },
  dbPort: { arg: 'repoadmin_db_port', env: ['REPO_MAN_DB_PORT'], about: 'database port', default: '5432; 3306 for mariadb and mysql' },
  dbUser: { arg: 'repoadmin_db_username', env: ['REPO_MAN_DB_USER'], about: 'database user name', default: 'repoadmin' },
  dbPassword: { arg: 'repoadmin_db_password', env: ['REPO_MAN_DB_PASS'], about: 'database password (set but empty: none)', default: 'repoadmin' },
  dbDatabase: { arg: 'repoadmin_db_database', env: ['REPO_MAN_DB_DATABASE'], about: 'database name', default: 'repoadmin' },
  dbConnectTimeout: { arg: 'repoadmin_db_connect_timeout', env: ['REPO_MAN_DB_CONNECT_TIMEOUT'], about: 'seconds to connect to the database (and to wait for a pooled connection), 1 to 600', default: '5' },
  dbStatementTimeout: { arg: 'repoadmin_db_statement_timeout', env: ['REPO_MAN_DB_STATEMENT_TIMEOUT'], about: 'seconds a statement may run, 1 to 3600', default: '10' },
  dbReadHost: { arg: 'repoadmin_db_read_host', env: ['REPO_MAN_DB_READ_HOST'], about: 'PostgreSQL read replica host (or a proxy to the replicas): lookups and searches read there', default: 'none: reads go to the primary' },
  dbReadPort: { arg: 'repoadmin_db_read_port', env: ['REPO_MAN_DB_READ_PORT'], about: 'read replica port', default: 'the database port' },
  dbReadMaxLag: { arg: 'repoadmin_db_read_max_lag_ms', env: ['REPO_MAN_DB_READ_MAX_LAG_MS'], about: 'milliseconds the replica may be behind before reads go to the primary, 0 to 3600000', default: '1000' },
  dataDir: { arg: 'repoadmin_data_dir', env: ['REPO_MAN_DATA_DIR'], about: 'folder of the embedded database', default: '$XDG_DATA_HOME/repoadmin, else ~/.local/share/repoadmin' },
  host: { arg: 'repoadmin_host', env: ['REPO_MAN_HOST'], about: 'address to listen on (127.0.0.1: this machine only)', default: 'every interface' },
  port: { arg: 'port', env: ['REPO_MAN_PORT', 'PORT'], about: 'port to listen on (0: any free one)', default: '9090' },
  jwtSecret: { arg: 'repoadmin_jwt_secret', env: ['REPO_MAN_JWT_SECRET'], about: 'token signing secret, at least 32 bytes', default: 'made on first start and kept in the database' },
  jwtTtl: { arg: 'repoadmin_jwt_ttl', env: ['REPO_MAN_JWT_TTL'], about: 'token lifetime in seconds', default: '3600' },
  jwtIssuer: { arg: 'repoadmin_jwt_issuer', env: ['REPO_MAN_JWT_ISSUER'], about: 'token issuer', default: 'repoadmin' },
  adminPassword: { arg: 'repoadmin_admin_password', env: ['REPO_MAN_ADMIN_PASSWORD'], about: 'first password of admin, on first start only', default: 'password, accepted only from loopback, which must then be changed' },
  adminPasswordFile: { arg: 'repoadmin_admin_password_file', env: ['REPO_MAN_ADMIN_PASSWORD_FILE'], about: 'a file holding that password (a container secret), instead of it', default: 'none' },
  requireAdminPassword: { arg: 'repoadmin_require_admin_password', env: ['REPO_MAN_REQUIRE_ADMIN_PASSWORD'], about: 'refuse a first start without that password (the image sets it)', default: 'false' },
  searchPublic: { arg: 'repoadmin_search_public', env: ['REPO_MAN_SEARCH_PUBLIC'], about: 'search without a token', default: 'true' },
  bcryptCost: { arg: 'repoadmin_bcrypt_cost', env: ['REPO_MAN_BCRYPT_COST'], about: 'password hashing cost, 4 to 18 (each step doubles the time of a login)', default: '12' },
  trustProxy: { arg: 'repoadmin_trust_proxy', env: ['REPO_MAN_TRUST_PROXY'], about: 'proxies in front (0 to 10; true means 1): the client address is that many X-Forwarded-For entries from the right', default: 'false' },
  metrics: { arg: 'repoadmin_metrics', env: ['REPO_MAN_METRICS'], about: 'serve /metrics', default: 'true' },
  logLevel: { arg: 'repoadmin_log_level', env: ['REPO_MAN_LOG_LEVEL'], about: 'fatal, error, warn, info, debug, trace or silent', default: 'info' },
  workers: { arg: 'workers', env: ['REPO_MAN_WORKERS'], about: 'processes serving requests, 1 to 64; more than 1 only on postgres, mariadb or mysql', default: '1' },
  eventsDays: { arg: 'repoadmin_events_days', env: ['REPO_MAN_EVENTS_DAYS'], about: 'days events are kept, 1 to 3650', default: '30' },
  auditDays: { arg: 'repoadmin_audit_days', env: ['REPO_MAN_AUDIT_DAYS'], about: 'days audit entries are kept, 1 to 36500', default: '365' },
  webhookRetrySchedule: { arg: 'repoadmin_webhook_retry_schedule', env: ['REPO_MAN_WEBHOOK_RETRY_SCHEDULE'], about: 'waits between webhook delivery attempts, e.g. 1s,2s,4s', default: '5s,5m,30m,2h,5h,10h,10h' },
  webhookAllowNetworks: { arg: 'repoadmin_webhook_allow_networks', env: ['REPO_MAN_WEBHOOK_ALLOW_NETWORKS'], about: 'networks (CIDR, comma-separated) webhooks may reach though loopback, link-local or otherwise refused', default: 'none' },
  trashDays: { arg: 'repoadmin_trash_days', env: ['REPO_MAN_TRASH_DAYS'], about: 'days a deleted record stays in the trash, 1 to 3650', default: '7' },
  retentionAt: { arg: 'repoadmin_retention_at', env: ['REPO_MAN_RETENTION_AT'], about: 'UTC time of day (HH:MM) enabled retention policies run', default: '03:00' },
  oidcAudience: { arg: 'repoadmin_oidc_audience', env: ['REPO_MAN_OIDC_AUDIENCE'], about: "the audience (aud) trusted publishers' ID tokens must name unless a publisher names its own", default: 'repoadmin' },
  oidcTokenMinutes: { arg: 'repoadmin_oidc_token_minutes', env: ['REPO_MAN_OIDC_TOKEN_MINUTES'], about: 'minutes a project token made by an ID token exchange is valid, 1 to 60', default: '15' },
  oidcAllowNetworks: { arg: 'repoadmin_oidc_allow_networks', env: ['REPO_MAN_OIDC_ALLOW_NETWORKS'], about: 'networks (CIDR, comma-separated) where OpenID Connect issuers may be, over http too, though loopback or otherwise refused', default: 'none' },
  immutableVersions: { arg: 'repoadmin_immutable_versions', env: ['REPO_MAN_IMMUTABLE_VERSIONS'], about: 'versions matching this regular expression never come back with other content, after a delete either', default: 'none' },
} satisfies Record<string, Setting>;
