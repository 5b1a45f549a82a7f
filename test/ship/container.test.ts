// The container definitions, checked without a Docker engine: the Dockerfile through a Dockerfile
// parser, the compose file through `docker-compose config` (Debian's docker-compose package).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Copy, DockerfileParser, type Instruction } from 'dockerfile-ast';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { skipping } from '../helpers/skip.js';
import { ROOT } from './api-files.js';

const run = promisify(execFile);
const dockerfile = DockerfileParser.parse(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'));

/** The instructions of the last stage: what the image runs with. */
function finalStage(): Instruction[] {
  const froms = dockerfile.getFROMs();
  const lastFrom = froms[froms.length - 1]!.getRange().start.line;
  return dockerfile.getInstructions().filter((i) => i.getRange().start.line >= lastFrom);
}

function args(instruction: Instruction): string[] {
  return instruction.getArguments().map((a) => a.getValue());
}

const keyword = (name: string) => finalStage().filter((i) => i.getKeyword() === name);

describe('the Dockerfile', () => {
  it('is multi-stage on a slim Node base, the run stage taking only the build stage output', () => {
    const froms = dockerfile.getFROMs();
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const from of froms) {
      expect(from.getImageName()).toBe('node');
      expect(from.getImageTag()).toMatch(/-slim$/);
    }
    const buildStage = froms[0]!.getBuildStage();
    expect(buildStage).toBeTruthy();
    const copies = keyword('COPY');
    expect(copies.length).toBeGreaterThan(0);
    expect(copies.map((c) => (c instanceof Copy ? c.getFromFlag()?.getValue() : undefined))).toEqual(copies.map(() => buildStage));
  });

  it('runs as a non-root user', () => {
    const users = keyword('USER');
    expect(users.length).toBeGreaterThan(0);
    const user = args(users[users.length - 1]!)[0]!.split(':')[0];
    expect(['root', '0', '']).not.toContain(user);
  });

  it('exposes 9090 and checks /health/ready with node (slim images have no curl)', () => {
    expect(keyword('EXPOSE').flatMap(args)).toContain('9090');
    const checks = keyword('HEALTHCHECK');
    expect(checks).toHaveLength(1);
    const content = checks[0]!.getArgumentsContent()!;
    expect(content).toMatch(/CMD \[?"?node"?/);
    expect(content).toContain('/health/ready');
    expect(content).not.toMatch(/\bcurl\b|\bwget\b/);
  });

  it('keeps the embedded database folder in a volume, the one REPO_MAN_DATA_DIR names', () => {
    const line = keyword('VOLUME')[0]!.getRange().start.line;
    const dataDir = dockerfile.resolveVariable('REPO_MAN_DATA_DIR', line);
    expect(dataDir).toMatch(/^\//);
    expect(keyword('VOLUME').flatMap(args)).toContain(dataDir);
  });

  it('starts repoadmin server, configured through REPO_MAN_* variables', () => {
    const entry = [...keyword('ENTRYPOINT').flatMap(args), ...keyword('CMD').flatMap(args)].join(' ');
    expect(entry).toMatch(/repoadmin.*server/);
    expect(keyword('ENV').flatMap(args).join(' ')).toMatch(/REPO_MAN_PORT=9090/);
  });

  it('has a .dockerignore that keeps node_modules, dist and .git out of the build context', () => {
    const ignored = readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const entry of ['node_modules', 'dist', '.git']) expect(ignored).toContain(entry);
  });
});

async function composeBinary(): Promise<boolean> {
  try {
    await run('docker-compose', ['version']);
    return true;
  } catch {
    return false;
  }
}

const haveCompose = await composeBinary();
if (!haveCompose && process.env.REPOADMIN_REQUIRE_COMPOSE === '1') {
  throw new Error('REPOADMIN_REQUIRE_COMPOSE=1 but docker-compose is not installed (apt-get install docker-compose)');
}
skipping('the docker-compose checks', haveCompose ? undefined : 'docker-compose is not installed (apt-get install docker-compose)');

interface Compose {
  services: Record<string, {
    image?: string;
    build?: unknown;
    environment?: Record<string, string>;
    depends_on?: Record<string, { condition: string }>;
    healthcheck?: { test: string[] };
    command?: string[];
    volumes?: (string | { source: string; target: string })[];
    ports?: unknown[];
  }>;
  volumes?: Record<string, unknown>;
}

describe('docker-compose.yml', () => {
  // The file as written: its structure, checked here whether or not docker-compose is installed.
  const written = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as Compose;

  function checkStructure(compose: Compose) {
    const app = compose.services.repoadmin!;
    const db = compose.services.postgres!;
    expect(app.build).toBeDefined();
    expect(app.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    expect(app.environment).toMatchObject({ REPO_MAN_DB_JDBC: 'postgres', REPO_MAN_DB_HOST: 'postgres', REPO_MAN_DB_DATABASE: 'repoadmin', REPO_MAN_DB_USER: 'repoadmin' });
    expect(app.environment?.REPO_MAN_DB_PASS).toBeDefined();
    expect(db.image).toMatch(/^postgres:\d+/);
    expect(db.healthcheck?.test.join(' ')).toContain('pg_isready');
    const mounts = (db.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':')[0] : v.source));
    expect(Object.keys(compose.volumes ?? {})).toEqual(expect.arrayContaining(mounts));
    expect(mounts.length).toBe(1);
  }

  it('starts the service after a healthy PostgreSQL with a named volume', () => {
    checkStructure(written);
  });

  it.skipIf(!haveCompose)('passes docker-compose config', async () => {
    const { stdout } = await run('docker-compose', ['-f', path.join(ROOT, 'docker-compose.yml'), 'config'], { cwd: ROOT, env: { PATH: process.env.PATH } });
    const resolved = parse(stdout) as Compose;
    checkStructure(resolved);
    // Unset variables take their defaults; the password of the service and of the database agree.
    expect(resolved.services.repoadmin!.environment!.REPO_MAN_DB_PASS).toBe(resolved.services.postgres!.environment!.POSTGRES_PASSWORD);
  });

  it.skipIf(!haveCompose)('rejects a broken compose file (the check is real)', async () => {
    const broken = path.join(ROOT, 'test', 'ship', 'fixtures', 'broken-compose.yml');
    await expect(run('docker-compose', ['-f', broken, 'config'], { cwd: ROOT })).rejects.toThrow();
  });
});

describe('docker-compose.mariadb.yml', () => {
  const file = path.join(ROOT, 'docker-compose.mariadb.yml');
  const written = parse(readFileSync(file, 'utf8')) as Compose;
  const mountsOf = (service: Compose['services'][string]) =>
    (service.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':').slice(0, 2).join(':') : `${v.source}:${v.target}`));

  function checkStructure(compose: Compose) {
    const app = compose.services.repoadmin!;
    const db = compose.services.mariadb!;
    const driver = compose.services['mysql2-driver']!;
    expect(app.build).toBeDefined();
    expect(app.depends_on).toEqual({
      mariadb: { condition: 'service_healthy' },
      'mysql2-driver': { condition: 'service_completed_successfully' },
    });
    expect(app.environment).toMatchObject({ REPO_MAN_DB_JDBC: 'mariadb', REPO_MAN_DB_HOST: 'mariadb', REPO_MAN_DB_PORT: '3306', REPO_MAN_DB_DATABASE: 'repoadmin', REPO_MAN_DB_USER: 'repoadmin' });
    // The driver is installed by the one-shot service into the volume the server reads as its driver folder.
    const folder = app.environment!.REPO_MAN_DB_DRIVER_PATH!;
    expect(mountsOf(app)).toContain(`drivers:${folder}`);
    expect(driver.command!.join(' ')).toMatch(/^npm install --prefix \/drivers .*mysql2/);
    expect(mountsOf(driver)).toContain('drivers:/drivers');
    expect(db.image).toMatch(/^mariadb:\d+/);
    expect(db.healthcheck?.test.join(' ')).toContain('healthcheck.sh');
    expect(mountsOf(db)).toEqual(['mariadbdata:/var/lib/mysql']);
    expect(Object.keys(compose.volumes ?? {}).sort()).toEqual(['drivers', 'mariadbdata']);
  }

  it('starts the service after a healthy MariaDB and the mysql2 driver installed into a volume', () => {
    checkStructure(written);
  });

  it.skipIf(!haveCompose)('passes docker-compose config', async () => {
    const { stdout } = await run('docker-compose', ['-f', file, 'config'], { cwd: ROOT, env: { PATH: process.env.PATH } });
    const resolved = parse(stdout) as Compose;
    checkStructure(resolved);
    expect(resolved.services.repoadmin!.environment!.REPO_MAN_DB_PASS).toBe(resolved.services.mariadb!.environment!.MARIADB_PASSWORD);
  });
});

describe('docker-compose.ha.yml', () => {
  const file = path.join(ROOT, 'docker-compose.ha.yml');
  const written = parse(readFileSync(file, 'utf8'), { merge: true }) as Compose;
  const mountsOf = (service: Compose['services'][string]) =>
    (service.volumes ?? []).map((v) => (typeof v === 'string' ? v.split(':').slice(0, 2).join(':') : `${v.source}:${v.target}`));

  function checkStructure(compose: Compose) {
    const names = Object.keys(compose.services).sort();
    expect(names).toEqual(['etcd', 'haproxy', 'pg-haproxy', 'pg1', 'pg2', 'pg3', 'repoadmin1', 'repoadmin2', 'repoadmin3']);
    for (const name of ['repoadmin1', 'repoadmin2', 'repoadmin3']) {
      // Writes through the primary port of the nodes' HAProxy, reads through its replicas port (deploy/patroni/haproxy.cfg).
      expect(compose.services[name]!.environment).toMatchObject({
        REPO_MAN_DB_JDBC: 'postgres',
        REPO_MAN_DB_HOST: 'pg-haproxy',
        REPO_MAN_DB_PORT: '5000',
        REPO_MAN_DB_READ_HOST: 'pg-haproxy',
        REPO_MAN_DB_READ_PORT: '5001',
      });
    }
    for (const name of ['pg1', 'pg2', 'pg3']) {
      const node = compose.services[name]!;
      expect(node.environment).toMatchObject({ PATRONI_NAME: name, PATRONI_POSTGRESQL_CONNECT_ADDRESS: `${name}:5432`, PATRONI_ETCD3_HOSTS: 'etcd:2379' });
      expect(mountsOf(node)).toEqual([`${name}:/var/lib/postgresql/patroni`]);
    }
    expect(mountsOf(compose.services['pg-haproxy']!)[0]).toMatch(/deploy\/patroni\/haproxy\.cfg:\/usr\/local\/etc\/haproxy\/haproxy\.cfg$/);
    expect(mountsOf(compose.services.haproxy!)[0]).toMatch(/deploy\/haproxy\.cfg:\/usr\/local\/etc\/haproxy\/haproxy\.cfg$/);
  }

  it('runs three instances on three Patroni nodes behind HAProxy, writing through the primary port and reading through the replicas port', () => {
    checkStructure(written);
    // The ports the instances use are the ones the nodes' HAProxy binds.
    const proxy = readFileSync(path.join(ROOT, 'deploy', 'patroni', 'haproxy.cfg'), 'utf8');
    expect(proxy).toMatch(/listen pg_primary\n\s+bind :5000\n\s+option httpchk OPTIONS \/primary/);
    expect(proxy).toMatch(/listen pg_replicas\n\s+bind :5001\n[\s\S]*option httpchk OPTIONS \/replica/);
  });

  it.skipIf(!haveCompose)('passes docker-compose config', async () => {
    const { stdout } = await run('docker-compose', ['-f', file, 'config'], { cwd: ROOT, env: { PATH: process.env.PATH } });
    checkStructure(parse(stdout) as Compose);
  });
});
