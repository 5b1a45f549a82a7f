// The tests mutation testing runs (stryker.config.mjs): those of the mutated modules, on the
// embedded database only (the database servers add time, not cases, to these modules).
import { defineConfig } from 'vitest/config';
import { selectedModules } from './stryker.config.mjs';

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The migrated embedded database that test servers start from (test/helpers/pglite-template.ts).
    globalSetup: ['test/helpers/pglite-template.ts'],
    include: [...new Set(selectedModules().flatMap((m) => m.tests))],
    env: { REPOADMIN_TEST_JENKINS: 'current', REPOADMIN_TEST_PG_URL: '', REPOADMIN_TEST_MYSQL_URL: '', REPOADMIN_REQUIRE_PG: '', REPOADMIN_REQUIRE_MYSQL: '' },
  },
});
