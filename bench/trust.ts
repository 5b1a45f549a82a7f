// `npm run bench:trust`: what trusted publishing costs, against the built server on PostgreSQL. An
// OpenID Connect issuer on 127.0.0.1 (test/helpers/oidc-issuer.ts, built with jose) signs GitHub
// Actions ID tokens ahead of the run, each with its own `jti`; then three requests take turns of one
// second each (load.ts, loadHttpInterleaved), so that all see the same machine:
// - the exchange (POST /v1/authentication/oidc) of a fresh ID token, the issuer's JWK Set cached
//   (fetched once, at the first exchange);
// - a publish through an ordinary project token of the scope publish;
// - a publish through a project token the exchange made (bound to main and to the repository).
// The database and the server are removed at the end.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { githubClaims, startIssuer } from '../test/helpers/oidc-issuer.js';
import { type HttpRequest, turnsTable } from './load.js';
import { call, killChildren, startServer } from './processes.js';

const ADMIN_PASSWORD = `bench-${randomBytes(9).toString('base64url')}`;
const USER_PASSWORD = `bench-user-${randomBytes(9).toString('base64url')}`;
const REPOSITORY = 'octo-org/octo-repo';

const progress = (line: string) => process.stderr.write(`${line}\n`);

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    warmup: { type: 'string', default: '2' },
    connections: { type: 'string', default: '1,16' },
    // More than the exchanges of a run can use: a token used twice is refused (replay).
    'id-tokens': { type: 'string', default: '8000' },
  },
});
const connectionsList = values.connections.split(',').map(Number);

function record(artifactId: string, i: number): string {
  return JSON.stringify({
    projectName: 'octo',
    branch: 'main',
    artifact: { groupId: 'org.octo', artifactId: `${artifactId}-${i % 50}`, version: `1.${i}.0` },
    repositoryUrl: `https://github.com/${REPOSITORY}`,
    type: 'LIBRARY',
    latestVersion: i % 2 === 0,
  });
}

async function main(): Promise<void> {
  const url = new URL(process.env.REPOADMIN_BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const name = `repoadmin_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const issuer = await startIssuer();
  try {
    const server = await startServer({
      env: {
        REPO_MAN_DB_JDBC: 'postgres',
        REPO_MAN_DB_HOST: url.hostname,
        REPO_MAN_DB_PORT: url.port || '5432',
        REPO_MAN_DB_USER: decodeURIComponent(url.username || 'postgres'),
        REPO_MAN_DB_PASS: decodeURIComponent(url.password),
        REPO_MAN_DB_DATABASE: name,
        REPO_MAN_ADMIN_PASSWORD: ADMIN_PASSWORD,
        // The issuer is on this machine, over http.
        REPO_MAN_OIDC_ALLOW_NETWORKS: '127.0.0.0/8',
      },
    });
    try {
      const { token: adminToken } = (await call(server, '/v1/authentication/generate-token', { username: 'admin', password: ADMIN_PASSWORD })) as { token: string };
      await call(server, '/v1/users', { username: 'octo-ci', password: USER_PASSWORD, projectName: 'octo', role: 'ROLE_USER' }, adminToken);
      const { token: userToken } = (await call(server, '/v1/authentication/generate-token', { username: 'octo-ci', password: USER_PASSWORD })) as { token: string };
      const { token: projectToken } = (await call(server, '/v1/tokens', { name: 'bench', scope: 'publish' }, userToken)) as { token: string };
      await call(server, '/v1/trusted-publishers', { projectName: 'octo', provider: 'github', issuer: issuer.issuer, claims: { repository: REPOSITORY } }, adminToken);

      const count = Number(values['id-tokens']);
      progress(`signing ${count} ID tokens`);
      const idTokens: string[] = [];
      // Valid for the whole run: an hour, the longest lifetime the exchange takes.
      const lifetime = () => {
        const now = Math.floor(Date.now() / 1000);
        return { iat: now, nbf: now - 5, exp: now + 3500 };
      };
      for (let i = 0; i < count; i++) idTokens.push(await issuer.sign(githubClaims(issuer.issuer, { repository: REPOSITORY, ...lifetime() })));
      const { token: exchanged } = (await call(server, '/v1/authentication/oidc', { token: idTokens.pop() })) as { token: string };

      // Each exchange takes the next ID token no request used (the load's running number counts every request).
      let next = 0;
      const requests: [string, HttpRequest][] = [
        ['exchange of an ID token (JWK Set cached)', { method: 'POST', path: '/v1/authentication/oidc', body: () => JSON.stringify({ token: idTokens[next++] ?? 'ID tokens used up: sign more with --id-tokens' }) }],
        ['publish through a project token', { method: 'POST', path: '/v1/repositories', headers: { authorization: `Bearer ${projectToken}` }, body: (i) => record('plain', i) }],
        ['publish through an exchanged token', { method: 'POST', path: '/v1/repositories', headers: { authorization: `Bearer ${exchanged}` }, body: (i) => record('verified', i) }],
      ];
      const table = await turnsTable(server.url, requests, connectionsList, { seconds: Number(values.seconds), warmupSeconds: Number(values.warmup) });
      process.stdout.write(`PostgreSQL, ${next} ID tokens exchanged, the JWK Set fetched ${issuer.jwksFetches()} time(s) in all\n\n${table}\n`);
    } finally {
      await server.stop();
    }
  } finally {
    await issuer.close();
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  killChildren();
  progress(`bench:trust failed: ${(error as Error).stack ?? String(error)}`);
  process.exitCode = 1;
});
