// A local git repository holding a definition file, for --git tests (file:// addresses).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-C', dir, ...args], {
    encoding: 'utf8',
    env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' },
  });
}

/** Commits `files` (path -> JSON) on `branch` of the repository at `dir`, creating it if needed. */
export async function commitFiles(dir: string, branch: string, files: Record<string, unknown>): Promise<void> {
  await mkdir(dir, { recursive: true });
  // Again on an existing repository, git warns "re-init: ignored --initial-branch" into the test output.
  if (!existsSync(join(dir, '.git'))) git(dir, 'init', '-q', '-b', 'main');
  if (branch !== 'main') git(dir, 'checkout', '-q', '-B', branch);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), JSON.stringify(content, null, 2));
    git(dir, 'add', path);
  }
  git(dir, 'commit', '-q', '-m', `jobs on ${branch}`);
}
