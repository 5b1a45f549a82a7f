import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';

describe('loadConfig', () => {
  it('takes the argument over the variable, and the variable over the default', () => {
    expect(loadConfig([], {}).port).toBe(9090);
    expect(loadConfig([], { PORT: '8000' }).port).toBe(8000);
    expect(loadConfig([], { PORT: '8000', REPO_MAN_PORT: '8001' }).port).toBe(8001);
    expect(loadConfig(['--port', '8002'], { REPO_MAN_PORT: '8001' }).port).toBe(8002);
    expect(loadConfig(['--port=8003'], {}).port).toBe(8003);
    expect(loadConfig(['--repoadmin_db_jdbc', 'postgresql'], {}).db).toMatchObject({ kind: 'postgres', driver: 'pg' });
    expect(loadConfig([], { REPO_MAN_DB_DRIVER: 'org.postgresql.Driver', REPO_MAN_DB_JDBC: 'postgres' }).db.driver).toBe('pg');
    expect(loadConfig([], { XDG_DATA_HOME: '/data' }).db.dataDir).toBe('/data/repoadmin');
  });

  it('takes mariadb and mysql as one kind, with the mysql2 driver and port 3306 by default', () => {
    expect(loadConfig(['--repoadmin_db_jdbc', 'mariadb'], {}).db).toMatchObject({ kind: 'mysql', driver: 'mysql2', port: 3306 });
    expect(loadConfig([], { REPO_MAN_DB_JDBC: 'MySQL' }).db).toMatchObject({ kind: 'mysql', driver: 'mysql2', port: 3306 });
    expect(loadConfig([], { REPO_MAN_DB_JDBC: 'postgres' }).db.port).toBe(5432);
    const named = loadConfig(['--repoadmin_db_jdbc', 'mariadb', '--repoadmin_db_port', '3307', '--repoadmin_db_driver', 'org.mariadb.jdbc.Driver'], {});
    expect(named.db).toMatchObject({ driver: 'mysql2', port: 3307 });
    expect(loadConfig([], { REPO_MAN_DB_JDBC: 'mysql', REPO_MAN_DB_DRIVER: 'com.mysql.cj.jdbc.Driver' }).db.driver).toBe('mysql2');
    expect(loadConfig([], { REPO_MAN_DB_JDBC: 'mysql', REPO_MAN_DB_DRIVER_PATH: '/opt/drivers' }).db.driverPath).toBe('/opt/drivers');
  });

  it('reads the trusted publishing settings: audience, token minutes 1 to 60, issuer networks', () => {
    expect(loadConfig([], {}).oidc).toEqual({ audience: 'repoadmin', tokenMinutes: 15, allowNetworks: [] });
    const given = loadConfig(['--repoadmin_oidc_audience', 'registry.example.com', '--repoadmin_oidc_token_minutes', '60'], { REPO_MAN_OIDC_ALLOW_NETWORKS: '10.0.0.0/8,::1/128' });
    expect(given.oidc).toEqual({ audience: 'registry.example.com', tokenMinutes: 60, allowNetworks: ['10.0.0.0/8', '::1/128'] });
    expect(() => loadConfig([], { REPO_MAN_OIDC_TOKEN_MINUTES: '61' })).toThrow(/REPO_MAN_OIDC_TOKEN_MINUTES must be a whole number from 1 to 60/);
    expect(() => loadConfig([], { REPO_MAN_OIDC_TOKEN_MINUTES: '0' })).toThrow(/from 1 to 60/);
    expect(() => loadConfig([], { REPO_MAN_OIDC_ALLOW_NETWORKS: 'localhost' })).toThrow(/REPO_MAN_OIDC_ALLOW_NETWORKS/);
  });

  it('reads the read replica settings on PostgreSQL only, with the database port and a 1000 ms lag by default', () => {
    expect(loadConfig([], { REPO_MAN_DB_JDBC: 'postgres' }).db.read).toBeUndefined();
    expect(loadConfig([], { REPO_MAN_DB_JDBC: 'postgres', REPO_MAN_DB_PORT: '5000', REPO_MAN_DB_READ_HOST: 'replicas' }).db.read).toEqual({ host: 'replicas', port: 5000, maxLagMs: 1000 });
    const given = loadConfig(['--repoadmin_db_read_host', 'r', '--repoadmin_db_read_port', '5001', '--repoadmin_db_read_max_lag_ms', '250'], { REPO_MAN_DB_JDBC: 'postgres' });
    expect(given.db.read).toEqual({ host: 'r', port: 5001, maxLagMs: 250 });
    expect(() => loadConfig([], { REPO_MAN_DB_JDBC: 'mariadb', REPO_MAN_DB_READ_HOST: 'r' })).toThrow(/REPO_MAN_DB_READ_HOST needs PostgreSQL/);
    expect(() => loadConfig([], { REPO_MAN_DB_READ_HOST: 'r' })).toThrow(/needs PostgreSQL/);
    expect(() => loadConfig([], { REPO_MAN_DB_JDBC: 'postgres', REPO_MAN_DB_READ_HOST: 'r', REPO_MAN_DB_READ_MAX_LAG_MS: 'soon' })).toThrow(/REPO_MAN_DB_READ_MAX_LAG_MS must be a whole number/);
  });

  it('reads REPO_MAN_DB_PASS set but empty as no password, and unset as the default', () => {
    expect(loadConfig([], { REPO_MAN_DB_PASS: '' }).db.password).toBe('');
    expect(loadConfig([], {}).db.password).toBe('repoadmin');
    expect(loadConfig(['--repoadmin_db_password', 'given'], { REPO_MAN_DB_PASS: '' }).db.password).toBe('given');
  });

  it.each([
    [['--port='], /--port needs a value/],
    [['--port'], /--port needs a value/],
    [['--port', '0x50'], /--port must be a whole number/],
    [['--repoadmin_bcrypt_cost', '1e1'], /--repoadmin_bcrypt_cost must be a whole number from 4 to 18/],
    // 31 is bcrypt's own limit: about 36 hours a hash, so a first start would never end.
    [["--repoadmin_bcrypt_cost", "31"], /--repoadmin_bcrypt_cost must be a whole number from 4 to 18/],
    [['--repoadmin_search_public', 'maybe'], /must be true or false/],
    [['--repoadmin_log_level', 'loud'], /must be one of/],
    [['server'], /unexpected argument "server"/],
  ])('rejects %j', (args, message) => {
    expect(() => loadConfig(args, {})).toThrow(message);
  });

  it('rejects loose numbers from the environment too', () => {
    expect(() => loadConfig([], { REPO_MAN_BCRYPT_COST: '0x5' })).toThrow(/REPO_MAN_BCRYPT_COST must be a whole number/);
  });

  it('takes the database timeouts in seconds, 5 and 10 by default', () => {
    expect(loadConfig([], {}).db).toMatchObject({ connectTimeoutMs: 5_000, statementTimeoutMs: 10_000 });
    expect(loadConfig(['--repoadmin_db_connect_timeout', '2'], { REPO_MAN_DB_STATEMENT_TIMEOUT: '30' }).db).toMatchObject({ connectTimeoutMs: 2_000, statementTimeoutMs: 30_000 });
    expect(() => loadConfig([], { REPO_MAN_DB_CONNECT_TIMEOUT: '0' })).toThrow(/REPO_MAN_DB_CONNECT_TIMEOUT must be a whole number from 1 to 600/);
  });

  it('warns when a secret is a startup argument, which every local user can read in ps', () => {
    const config = loadConfig(['--repoadmin_db_password', 'db-secret', '--repoadmin_jwt_secret', 'x'.repeat(32)], { REPO_MAN_ADMIN_PASSWORD: 'an-admin-secret' });
    expect(config.warnings).toEqual([
      '--repoadmin_db_password is visible to every local user (ps, /proc): set REPO_MAN_DB_PASS in the environment instead',
      '--repoadmin_jwt_secret is visible to every local user (ps, /proc): set REPO_MAN_JWT_SECRET in the environment instead',
    ]);
    expect(loadConfig([], { REPO_MAN_DB_PASS: 'db-secret' }).warnings).toEqual([]);
  });

  it('takes the first password from REPO_MAN_ADMIN_PASSWORD_FILE without its final line break, the variable first', () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-config-')), 'admin-password');
    fs.writeFileSync(file, 'from-a-secret-file\n');
    expect(loadConfig([], { REPO_MAN_ADMIN_PASSWORD_FILE: file }).adminPassword).toBe('from-a-secret-file');
    expect(loadConfig([], { REPO_MAN_ADMIN_PASSWORD_FILE: file, REPO_MAN_ADMIN_PASSWORD: 'from-the-variable' }).adminPassword).toBe('from-the-variable');
    expect(() => loadConfig([], { REPO_MAN_ADMIN_PASSWORD_FILE: `${file}.missing` })).toThrow(
      `REPO_MAN_ADMIN_PASSWORD_FILE: cannot read ${file}.missing (ENOENT)`,
    );
    fs.writeFileSync(file, 'short\n');
    expect(() => loadConfig([], { REPO_MAN_ADMIN_PASSWORD_FILE: file })).toThrow(`REPO_MAN_ADMIN_PASSWORD_FILE (${file}) breaks the password rules`);
  });

  it('listens on every interface unless REPO_MAN_HOST names an address', () => {
    expect(loadConfig([], {}).host).toBeUndefined();
    expect(loadConfig([], { REPO_MAN_HOST: '127.0.0.1' }).host).toBe('127.0.0.1');
    expect(loadConfig(['--repoadmin_host', '::1'], {}).host).toBe('::1');
    expect(() => loadConfig([], { REPO_MAN_HOST: 'http://x/' })).toThrow('REPO_MAN_HOST must be an IP address or a host name, not "http://x/"');
  });

  it('requires a first password only when REPO_MAN_REQUIRE_ADMIN_PASSWORD says so', () => {
    expect(loadConfig([], {}).requireAdminPassword).toBe(false);
    expect(loadConfig([], { REPO_MAN_REQUIRE_ADMIN_PASSWORD: 'true' }).requireAdminPassword).toBe(true);
  });
});
