// What publish reads from the environment of common build servers (docs/cli.md, "Publishing from a pipeline").

/** Jenkins, GitLab CI, GitHub Actions; `origin/` and `refs/heads/` are dropped from GIT_BRANCH. */
export function branchFromEnv(env: NodeJS.ProcessEnv): { value: string; from: string } | undefined {
  for (const name of ['BRANCH_NAME', 'GIT_BRANCH', 'CI_COMMIT_REF_NAME', 'GITHUB_REF_NAME']) {
    const raw = env[name]?.trim();
    if (!raw) continue;
    const value = name === 'GIT_BRANCH' ? raw.replace(/^(?:refs\/heads\/|origin\/)/, '') : raw;
    if (value) return { value, from: name };
  }
  return undefined;
}

export function repositoryUrlFromEnv(env: NodeJS.ProcessEnv): string | undefined {
  if (env.GIT_URL) return env.GIT_URL;
  if (env.CI_PROJECT_URL) return env.CI_PROJECT_URL;
  if (env.GITHUB_SERVER_URL && env.GITHUB_REPOSITORY) return `${env.GITHUB_SERVER_URL.replace(/\/+$/, '')}/${env.GITHUB_REPOSITORY}`;
  return undefined;
}
