import { configDefaults, defineConfig } from 'vitest/config';

const JENKINS_TESTS = 'test/jenkins/**/*.test.ts';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
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
