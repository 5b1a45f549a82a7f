// `repoadmin trust list`: the trusted publishers, every project's or one's.
import { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action } from '../support.js';

export interface TrustListOptions {
  project?: string;
}

export function trustListCommand(deps: Deps, run = runTrustList): Command {
  return new Command('list')
    .summary('list the trusted publishers')
    .usage('[--project P] [--json]')
    .option('--project <name>', "only this project's")
    .action(action<{ project?: string }, TrustListOptions>(deps, (flags) => ({ project: flags.project }), run));
}

export async function runTrustList(opts: TrustListOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const answer = await deps.api.listTrustedPublishers({ projectName: opts.project });
  return {
    json: answer,
    table: {
      head: ['ID', 'PROJECT', 'PROVIDER', 'ISSUER', 'CLAIMS', 'BRANCHES', 'ENVIRONMENTS'],
      rows: answer.publishers.map((p) => [
        p.id,
        p.projectName,
        p.provider,
        p.jwks ? `${p.issuer} (keys given)` : p.issuer,
        Object.entries(p.claims).map(([name, value]) => `${name}=${value}`).join(' '),
        p.branches.join(' '),
        p.environments?.join(' ') ?? '',
      ]),
    },
    notes: answer.publishers.length === 0 ? [opts.project ? `No trusted publishers for ${opts.project}.` : 'No trusted publishers.'] : [],
  };
}
