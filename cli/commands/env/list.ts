// `repoadmin env list`: what runs where: each environment's current version of each artifact.
import { Command } from 'commander';
import type { Environment } from '../../../common/schemas/environments.js';
import type { Deps } from '../../deps.js';
import type { Cell, Report } from '../../output/index.js';
import { action, example } from '../support.js';
import { projectOf, shortTime } from './project.js';

export interface EnvListOptions {
  project?: string;
}

/** An environment's gates in the words of `env set`: `requires=staging,soak=60,protected`. */
export function gatesOf(env: Pick<Environment, 'requires' | 'soakMinutes' | 'protected'>): string {
  return [env.requires && `requires=${env.requires}`, env.soakMinutes != null && `soak=${env.soakMinutes}`, env.protected && 'protected'].filter(Boolean).join(',');
}

export function envListCommand(deps: Deps, run = runEnvList): Command {
  return new Command('list')
    .summary('what runs where: the current version of each artifact per environment')
    .description("Each environment of the project, earliest first, with its current version of each artifact, who promoted it and when.")
    .usage('[--project P] [--json]')
    .option('--project <name>', 'the project (default: your own)')
    .addHelpText('after', example('repoadmin env list --project shop'))
    .action(action<{ project?: string }, EnvListOptions>(deps, (flags) => ({ project: flags.project }), run));
}

export async function runEnvList(opts: EnvListOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const projectName = await projectOf(opts.project, deps);
  const answer = await deps.api.environments(projectName);
  const rows: Cell[][] = [];
  for (const env of answer.environments) {
    // An environment with nothing in it yet still has its row: it exists, and is empty.
    if (env.current.length === 0) rows.push([env.name, '-', '', '', '']);
    for (const c of env.current) {
      rows.push([env.name, `${c.groupId}:${c.artifactId}`, c.record.version, c.promotedBy.username ?? '-', shortTime(c.promotedAt)]);
    }
  }
  const gated = answer.environments.filter((e) => gatesOf(e));
  return {
    json: answer,
    table: { head: ['ENVIRONMENT', 'ARTIFACT', 'VERSION', 'BY', 'WHEN'], rows },
    notes:
      answer.environments.length === 0
        ? [`${answer.projectName} has no environments: set them with repoadmin env set --project ${answer.projectName} dev staging:requires=dev ...`]
        : gated.map((e) => `${e.name}: ${gatesOf(e)}`),
  };
}
