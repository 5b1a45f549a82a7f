// `repoadmin trust add`: trusts a pipeline's ID tokens (its provider, issuer and claims) to publish to a project.
import { readFile } from 'node:fs/promises';
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { PROVIDERS, TrustedPublisherCreateRequest, type Jwks, type Provider } from '../../../common/schemas/trust.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, checkRequest, example, withFlagNames, type FieldLabels } from '../support.js';

export interface TrustAddOptions {
  project: string;
  provider: Provider;
  issuer?: string;
  audience?: string;
  refClaim?: string;
  jwksFile?: string;
  claims: Record<string, string>;
  branches: string[];
  environments: string[];
  description?: string;
}

interface AddFlags {
  project?: string;
  provider?: string;
  issuer?: string;
  audience?: string;
  refClaim?: string;
  jwksFile?: string;
  claim: string[];
  branch: string[];
  environment: string[];
  description?: string;
}

/** The request's fields under the flags that set them. */
const FLAGS: FieldLabels = {
  projectName: '--project',
  provider: '--provider',
  issuer: '--issuer',
  audience: '--audience',
  refClaim: '--ref-claim',
  jwks: '--jwks-file',
  claims: '--claim',
  branches: '--branch',
  environments: '--environment',
  description: '--description',
};

const collect = (value: string, previous: string[]) => [...previous, value];

/** `--claim K=V`, repeated, as the claims object; the value may hold `=` and `*` globs. */
export function parseClaims(given: string[]): Record<string, string> {
  const claims: Record<string, string> = {};
  for (const pair of given) {
    const at = pair.indexOf('=');
    const name = at < 0 ? '' : pair.slice(0, at).trim();
    if (!name) throw new AppError('usage', `--claim takes NAME=VALUE, e.g. repository=acme/shop, not "${pair}"`);
    if (Object.hasOwn(claims, name)) throw new AppError('usage', `--claim ${name} is given twice`);
    claims[name] = pair.slice(at + 1);
  }
  return claims;
}

export function parseAddFlags(flags: AddFlags): TrustAddOptions {
  if (!flags.project) throw new AppError('usage', 'missing --project: the project the pipeline publishes to');
  if (!flags.provider || !(PROVIDERS as readonly string[]).includes(flags.provider)) {
    throw new AppError('usage', `--provider must be one of ${PROVIDERS.join(', ')}${flags.provider === undefined ? '' : `, not "${flags.provider}"`}`);
  }
  if (flags.claim.length === 0) throw new AppError('usage', 'missing --claim: name the repository or job, e.g. --claim repository=acme/shop');
  return {
    project: flags.project,
    provider: flags.provider as Provider,
    issuer: flags.issuer,
    audience: flags.audience,
    refClaim: flags.refClaim,
    jwksFile: flags.jwksFile,
    claims: parseClaims(flags.claim),
    branches: flags.branch,
    environments: flags.environment,
    description: flags.description,
  };
}

export function trustAddCommand(deps: Deps, run = runTrustAdd): Command {
  return new Command('add')
    .summary("trust a pipeline's ID tokens to publish to a project")
    .description(
      'Trust the ID tokens of a CI pipeline to publish to a project: every --claim must match (exact, or * globs), ' +
        'and the ref\'s branch one of --branch. The claims must pin the repository or job: github repository_id or ' +
        'repository (with repository_owner_id advised), gitlab project_id or project_path, jenkins and generic sub. ' +
        'Setups for GitHub Actions, GitLab CI and Jenkins: docs/pipelines.md.',
    )
    .usage('--project P --provider github|gitlab|jenkins|generic --claim NAME=VALUE... [--branch GLOB]... [options]')
    .option('--project <name>', 'the project its tokens publish to')
    .option('--provider <name>', `the CI service: ${PROVIDERS.join(', ')}`)
    .option('--issuer <url>', 'the issuer (default for github and gitlab: their public one; required for jenkins and generic)')
    .option('--audience <aud>', "what the ID token's aud must contain (default: the server's audience)")
    .option('--ref-claim <name>', 'jenkins and generic: the claim holding the ref (default ref)')
    .option('--jwks-file <file>', "the issuer's JWK Set, for a server that cannot reach the issuer")
    .option('--claim <name=value>', 'a claim that must match, exact or with * globs (repeatable)', collect, [])
    .option('--branch <glob>', 'a branch it may publish to (repeatable; default *)', collect, [])
    .option('--environment <name>', 'an environment its tokens may promote into (repeatable)', collect, [])
    .option('--description <text>', 'what the publisher is for')
    .addHelpText(
      'after',
      example(
        'repoadmin trust add --project shop --provider github \\\n    --claim repository=acme/shop --claim repository_owner_id=1234567 --branch main --branch "release/*"',
        'repoadmin trust add --project shop --provider gitlab --claim project_path=acme/shop --branch main',
      ),
    )
    .action(action<AddFlags, TrustAddOptions>(deps, parseAddFlags, run));
}

async function readJwks(file: string): Promise<Jwks> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new AppError('usage', `--jwks-file: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  try {
    return JSON.parse(text) as Jwks;
  } catch (error) {
    throw new AppError('usage', `--jwks-file: ${file} is not JSON (${(error as Error).message})`);
  }
}

export async function runTrustAdd(opts: TrustAddOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const request = {
    projectName: opts.project,
    provider: opts.provider,
    issuer: opts.issuer,
    audience: opts.audience,
    claims: opts.claims,
    branches: opts.branches.length ? opts.branches : undefined,
    environments: opts.environments.length ? opts.environments : undefined,
    refClaim: opts.refClaim,
    jwks: opts.jwksFile === undefined ? undefined : await readJwks(opts.jwksFile),
    description: opts.description,
  };
  checkRequest(TrustedPublisherCreateRequest, request, FLAGS);
  let made;
  try {
    made = await deps.api.createTrustedPublisher(request);
  } catch (error) {
    throw withFlagNames(error, FLAGS);
  }
  const notes = [
    `Trusted ${made.provider} ID tokens from ${made.issuer} to publish to ${made.projectName} on ${made.branches.join(', ')} (publisher ${made.id}).`,
    `Their audience (aud) must be ${made.audience}.`,
  ];
  if (made.provider === 'github' && !Object.hasOwn(made.claims, 'repository_owner_id') && !Object.hasOwn(made.claims, 'repository_id')) {
    notes.push('Consider --claim repository_owner_id=<id> (or repository_id): ids survive a rename, and a deleted owner\'s name cannot be taken over.');
  }
  return { json: made, notes };
}
