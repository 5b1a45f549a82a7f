// Flags whose values end up in Jenkins or on disk are checked before anything is read or sent.
import { describe, expect, it } from 'vitest';
import { repoadmin } from './harness.js';

describe('jobs flags', () => {
  it.each([
    [['jobs', 'diff', 'jenkins-dsl-jobs.json', '--concurrency', '0'], /--concurrency must be a whole number from 1 to 32/],
    [['jobs', 'apply', 'jenkins-dsl-jobs.json', '--concurrency', '1000'], /--concurrency must be a whole number from 1 to 32/],
    [['jobs', 'validate', 'jenkins-dsl-jobs.json', '--source', 'evil --> <script>'], /--source must be one line without "-->"/],
    [['jobs', 'render', 'jenkins-dsl-jobs.json', '--source', 'two\nlines'], /--source must be one line/],
    [['jobs', 'validate', '--git', 'file:///nowhere', '--path', '../../etc/passwd'], /--path names a file inside the repository/],
  ])('refuses %j with exit 2', async (args, message) => {
    const run = await repoadmin(args);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(message);
    expect(run.stdout).toBe('');
  });
});
