import { configDefaults, defineConfig } from 'vitest/config';

const JENKINS_TESTS = 'test/jenkins/**/*.test.ts';

export default defineConfig({
  // vitest runs first the files that took longest last time, from what it keeps here
  // (node_modules/.vite unless set): .ci/run keeps it from one run to the next.
  cacheDir: process.env.REPOADMIN_TEST_CACHE_DIR,
  test: {
    // A test's time limit is a guard against a hang, never a measure of speed (npm run bench is):
    // three minutes for every test and hook alike. On a CI host slower than the one the former minute
    // was set on, tests that start servers, browsers and databases took up to 56 s of their 60 with
    // the cores busy (docs/test-durations.md has the files); a guard a third used leaves room for a
    // host twice as slow. Only a test that does much more names a limit of its own.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Four worker processes on two cores: most files wait on the servers, databases and child
    // processes they start, and two workers left the cores idle a third of the time (docs/testing.md).
    maxWorkers: 4,
    // Each worker process runs its files one after another instead of starting afresh for each:
    // on one 2-core machine the Node 20 suite took 889 s isolated and 704 s not (docs/testing.md).
    // What belongs to a process (the statement cache, say) is shared by the files a worker runs,
    // so a test of it asks what is already there.
    isolate: false,
    projects: [
      {
        extends: true,
        test: {
          name: 'main',
          globalSetup: ['test/helpers/pglite-template.ts'],
          include: ['{cli,server,common,public,test,scripts}/**/*.test.ts'],
          exclude: [...configDefaults.exclude, JENKINS_TESTS],
        },
      },
      // The jobs tests run against both behaviours of the Jenkins simulator (test/jenkins/simulator.ts).
      ...(['older', 'current'] as const).map((release) => ({
        extends: true as const,
        test: { name: `jenkins-${release}`, include: [JENKINS_TESTS], env: { REPOADMIN_TEST_JENKINS: release } },
      })),
    ],
  },
});
