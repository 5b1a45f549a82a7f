// The git branch spec of a pipeline job, and when its Jenkinsfile may be read by a lightweight
// checkout (docs/jobs.md, "What a real Jenkins does that a naive simulator misses").

// A `remoteBranchName` the git plugin's BranchSpec already reads as it is: a full ref
// (`refs/heads/x`, `refs/tags/x`), a remote branch (`origin/x`, `remotes/origin/x`), a pattern
// (`*/x`, `**`), a regular expression (`:regex`) or a variable (`${VAR}`, `$VAR`).
const QUALIFIED = /^(?:refs\/|remotes\/|origin\/|\*|:)|\$/;

/** One segment of a branch name, without the characters of patterns and variables. */
const SEGMENT = String.raw`[^/*?[\]$\\:\s]+`;

// Specs naming one branch that jenkins.plugins.git.GitSCMFileSystem (git plugin,
// BuilderImpl.supports and HeadNameResult) fetches alone: `*/name`, `refs/heads/name`,
// `refs/tags/name`. Any other spec is either refused by it (a remote name such as `origin/x`
// falls back to a full checkout) or, worse, accepted and turned into an invalid refspec such as
// `+refs/heads/**:...` (rejected by JGit's RefSpec) that fails every build before it starts.
const CONCRETE = new RegExp(String.raw`^(?:\*/|refs/heads/|refs/tags/)${SEGMENT}(?:/${SEGMENT})*$`);

/** The BranchSpec name written for a job: `**` (any branch) when none is given. */
export function branchSpec(remoteBranchName: string | undefined): string {
  if (remoteBranchName === undefined) return '**';
  return QUALIFIED.test(remoteBranchName) ? remoteBranchName : `*/${remoteBranchName}`;
}

/**
 * Whether CpsScmFlowDefinition may read the Jenkinsfile with a lightweight checkout: only for one
 * concrete branch, and not when the job polls its repository. WorkflowJob.poll compares the
 * checkouts recorded by the last build; a lightweight checkout records none, so polling would
 * never see a commit unless the Jenkinsfile itself ran `checkout scm`.
 */
export function lightweightCheckout(spec: string, polls: boolean): boolean {
  return CONCRETE.test(spec) && !polls;
}
