// Mutation testing (`npm run mutate`, not in CI: it is slow): StrykerJS changes the code where a
// silent change hurts most, one small change at a time, and counts the changes no test notices.
// The report goes to reports/mutation/; the scores of a run are kept in bench/results/.
// Some modules only: `MUTATE=order,jobs npm run mutate`.

/**
 * What is mutated, by module, and the tests that speak for it (vitest.mutate.config.mjs runs those;
 * of them, each mutant runs only the tests that run its code). When code moves, change the paths here.
 */
export const MODULES = {
  auth: {
    name: 'authentication and tokens',
    mutate: ['server/auth/passwords.ts', 'server/auth/project-tokens.ts', 'server/auth/tokens.ts'],
    // The module's own tests. test/server/auth.test.ts, tokens.test.ts and boundaries.test.ts check
    // the same rules over HTTP, but start a server per file: minutes per mutant on a busy machine.
    tests: ['server/auth/*.test.ts'],
  },
  order: {
    name: 'version order',
    mutate: ['common/version-key.ts'],
    tests: ['common/version-key.test.ts'],
  },
  publish: {
    name: 'the latest rule and publish policy',
    // The publish policy (server/policy/publish.ts, its SQL precondition and its check); the publish
    // and latest services (not search or byUid); the table module's rows, publish key and upsert, and
    // its latest lookup (not its search); and the publish statement of PostgreSQL and PGlite, which
    // carries the precondition, the latest clearing and the request's audit entry (postgres.ts, and
    // the entry's values and insert in db/audit.ts; the runs are on PGlite, which borrows it).
    // MariaDB's publish (mysql.ts) is left out: these runs have no MariaDB.
    mutate: [
      'server/policy/publish.ts',
      'server/services/versions.ts:33-106',
      'server/services/versions.ts:116-120',
      'server/db/versions.ts:86-160',
      'server/db/versions.ts:302-319',
      'server/db/versions.ts:333-346',
      'server/db/dialects/postgres.ts:97-181',
      'server/db/dialects/postgres.ts:238-242',
      'server/db/audit.ts:64-84',
    ],
    tests: [
      'test/server/publish-check.test.ts',
      'test/server/repositories.test.ts',
      'test/server/boundaries.test.ts',
      'test/trash/immutable.test.ts',
      'server/db/publish.test.ts',
      'test/server/concurrency.test.ts',
      // A publish through an exchanged ID token (checkOidcPublish, its precondition), against a real issuer.
      'test/server/trusted-publishing.test.ts',
      // What an exchanged token may publish, and how repository addresses compare.
      'server/policy/publish.test.ts',
      // The lock a publish takes (publishKey).
      'server/db/versions.test.ts',
      // The latest lookup of an environment (the service's branch for it).
      'test/server/promotions.test.ts',
    ],
  },
  compare: {
    name: 'the jobs compare',
    // How a live config.xml is compared with the file's: the comparison and its diff, the
    // normalisation both sides go through (Jenkins' re-serialised reads), and how item names compare.
    mutate: ['cli/jenkins/compare.ts', 'cli/jenkins/normalize.ts', 'cli/jenkins/names.ts:63-78'],
    tests: ['cli/jenkins/compare.test.ts', 'cli/jenkins/normalize.test.ts', 'cli/jenkins/names.test.ts', 'cli/jenkins/merge.test.ts', 'cli/jenkins/xml.test.ts'],
  },
  jobs: {
    name: 'jobs planning and comparison',
    // names.ts: only itemKey and foldChar, how the plan compares item names.
    mutate: ['cli/jenkins/plan.ts', 'cli/jenkins/compare.ts', 'cli/jenkins/names.ts:63-78'],
    // The planner's own tests (plan.test.ts against the simulator, compare.test.ts), and the
    // commands' tests that go through it.
    tests: [
      'test/jenkins/plan.test.ts',
      'cli/jenkins/compare.test.ts',
      'cli/jenkins/names.test.ts',
      'cli/jenkins/xml.test.ts',
      'test/jenkins/sync.test.ts',
      'test/jenkins/jenkinsfile-properties.test.ts',
      'test/jenkins/golden.test.ts',
      'test/jenkins/branches.test.ts',
    ],
  },
};

/**
 * The modules of this run: those MUTATE names (comma-separated), else all.
 * @returns {{ name: string; mutate: string[]; tests: string[] }[]}
 */
export function selectedModules(env = process.env) {
  const names = env.MUTATE ? env.MUTATE.split(',').map((n) => n.trim()) : Object.keys(MODULES);
  const unknown = names.filter((n) => !(n in MODULES));
  if (unknown.length > 0) throw new Error(`MUTATE: unknown module ${unknown.join(', ')} (known: ${Object.keys(MODULES).join(', ')})`);
  return names.map((n) => MODULES[n]);
}

/** The run's name in its report's file names: the modules of MUTATE, or `all`. */
const RUN = process.env.MUTATE ? process.env.MUTATE.replaceAll(',', '-') : 'all';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.mjs', related: false },
  coverageAnalysis: 'perTest',
  mutate: selectedModules().flatMap((m) => m.mutate),
  ignorePatterns: ['dist', 'reports', 'bench/results', '.stryker-tmp'],
  concurrency: 2,
  timeoutMS: 30_000,
  // The first run of the server tests, on a busy machine, takes minutes.
  dryRunTimeoutMinutes: 30,
  reporters: ['clear-text', 'html', 'json', 'progress'],
  htmlReporter: { fileName: `reports/mutation/${RUN}.html` },
  jsonReporter: { fileName: `reports/mutation/${RUN}.json` },
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: `.stryker-tmp/${RUN}`,
  cleanTempDir: 'always',
};
