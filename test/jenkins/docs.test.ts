// The example file of docs/jobs.md, "Replacing a seed job", is valid, and renders both job kinds and the view.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { repoadmin, scratch } from './harness.js';

describe('docs/jobs.md: replacing a seed job', () => {
  it('has an example file that jobs validate accepts', async () => {
    const readme = await readFile(new URL('../../docs/jobs.md', import.meta.url), 'utf8');
    const section = readme.split('## Replacing a seed job')[1]?.split('\n## ')[0] ?? '';
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const files = await scratch();
    try {
      const path = await files.write('jenkins-dsl-jobs.json', example!);
      const run = await repoadmin(['jobs', 'validate', path, '--source', 'docs']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('valid: 1 pipeline, 1 multibranch jobs, 1 folders, 1 views');
    } finally {
      await files.cleanup();
    }
  });
});
