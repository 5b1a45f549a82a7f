// `repoadmin env set`: a project's environments, in order, with their gates, from one word each.
import { Command } from 'commander';
import { AppError } from '../../../common/errors.js';
import { EnvironmentsRequest, type EnvironmentSpec, SOAK_MINUTES_MAX } from '../../../common/schemas/environments.js';
import { ENVIRONMENT_NAME } from '../../../common/schemas/repositories.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { action, checkRequest, example } from '../support.js';
import { gatesOf } from './list.js';
import { environmentName, projectOf } from './project.js';

export interface EnvSetOptions {
  project?: string;
  environments: EnvironmentSpec[];
}

const OPTIONS = 'requires=ENV, soak=MINUTES, protected';

/**
 * The environments of `dev staging:requires=dev prod:requires=staging,soak=60,protected`, checked
 * here so that a mistake names the word that holds it: a name, then `:` and options split by commas.
 */
export function parseEnvironments(words: string[]): EnvironmentSpec[] {
  if (words.length === 0) throw new AppError('usage', `give the environments in order, e.g. dev staging:requires=dev prod:requires=staging,soak=60,protected`);
  const specs: EnvironmentSpec[] = [];
  for (const word of words) {
    const colon = word.indexOf(':');
    const name = colon === -1 ? word : word.slice(0, colon);
    environmentName(name, `"${word}"`);
    if (specs.some((s) => s.name === name)) throw new AppError('usage', `"${word}": ${name} is named twice`);
    const spec: EnvironmentSpec = { name };
    const seen = new Set<string>();
    for (const option of colon === -1 ? [] : word.slice(colon + 1).split(',')) {
      const [key, value, ...extra] = option.split('=');
      if (!key) throw new AppError('usage', `"${word}": an empty option after "${name}:" (options: ${OPTIONS})`);
      if (seen.has(key)) throw new AppError('usage', `"${word}": ${key} is given twice`);
      seen.add(key);
      if (key === 'protected') {
        if (value !== undefined) throw new AppError('usage', `"${word}": protected takes no value`);
        spec.protected = true;
      } else if (key === 'requires') {
        if (value === undefined || extra.length > 0 || !ENVIRONMENT_NAME.test(value)) throw new AppError('usage', `"${word}": requires takes the name of an earlier environment, e.g. requires=staging`);
        if (!specs.some((s) => s.name === value)) {
          const earlier = specs.length ? `earlier: ${specs.map((s) => s.name).join(', ')}` : `${name} is the first`;
          throw new AppError('usage', `"${word}": requires=${value} names no earlier environment (${earlier})`);
        }
        spec.requires = value;
      } else if (key === 'soak') {
        const minutes = value !== undefined && extra.length === 0 && /^\d{1,7}$/.test(value) ? Number(value) : Number.NaN;
        if (!(minutes >= 1 && minutes <= SOAK_MINUTES_MAX)) throw new AppError('usage', `"${word}": soak takes whole minutes from 1 to ${SOAK_MINUTES_MAX}, e.g. soak=60, not "${option}"`);
        spec.soakMinutes = minutes;
      } else {
        throw new AppError('usage', `"${word}": unknown option "${key}" (options: ${OPTIONS})`);
      }
    }
    // The soak counts the time since the promotion into the required environment.
    if (spec.soakMinutes !== undefined && spec.requires === undefined) {
      throw new AppError('usage', `"${word}": soak=${spec.soakMinutes} needs requires=ENV: it counts the minutes since the promotion there`);
    }
    specs.push(spec);
  }
  return specs;
}

export function envSetCommand(deps: Deps, run = runEnvSet): Command {
  return new Command('set')
    .summary("set a project's environments and their gates (administrators)")
    .description(
      'Set the environments of a project, in order, replacing the ones set before. Each word is a name, then optionally ":" and gates split by commas: requires=ENV (the version must have been current in that earlier environment), soak=MINUTES (and promoted there that long ago; needs requires), protected (only administrators, and promote tokens whose trusted publisher names it).',
    )
    .usage('--project P <env[:gate,...]>...')
    .argument('<environments...>', 'the environments, earliest first')
    .option('--project <name>', 'the project (default: your own)')
    .addHelpText('after', example('repoadmin env set --project shop dev staging:requires=dev prod:requires=staging,soak=60,protected'))
    .action(action<{ project?: string }, EnvSetOptions>(deps, (flags, words) => ({ project: flags.project, environments: parseEnvironments(words) }), run));
}

export async function runEnvSet(opts: EnvSetOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  checkRequest(EnvironmentsRequest, { environments: opts.environments }, {});
  const projectName = await projectOf(opts.project, deps);
  const answer = await deps.api.setEnvironments(projectName, opts.environments);
  return {
    json: answer,
    table: { head: ['ENVIRONMENT', 'GATES'], rows: answer.environments.map((e) => [e.name, gatesOf(e) || '-']) },
    notes: [`Set ${answer.environments.length} environment${answer.environments.length === 1 ? '' : 's'} of ${answer.projectName}.`],
  };
}
