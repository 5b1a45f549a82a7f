import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{cli,server,common,public,test,scripts}/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
