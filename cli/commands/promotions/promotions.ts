// `repoadmin promotions`: the promotion history, newest first.
import { Command } from 'commander';
import { PAGE_SIZE_MAX } from '../../../common/schemas/repositories.js';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { environmentName, shortTime } from '../env/project.js';
import { action, example, wholeNumber } from '../support.js';

export interface PromotionsOptions {
  project?: string;
  environment?: string;
  groupId?: string;
  artifactId?: string;
  page?: number;
  size?: number;
}

interface PromotionsFlags {
  project?: string;
  env?: string;
  group?: string;
  artifact?: string;
  page?: string;
  size?: string;
}

export function parsePromotionsFlags(flags: PromotionsFlags): PromotionsOptions {
  return {
    project: flags.project,
    environment: flags.env === undefined ? undefined : environmentName(flags.env, '--env'),
    groupId: flags.group,
    artifactId: flags.artifact,
    page: wholeNumber(flags.page, '--page'),
    size: wholeNumber(flags.size, '--size', 1, PAGE_SIZE_MAX),
  };
}

export function promotionsCommand(deps: Deps, run = runPromotions): Command {
  return new Command('promotions')
    .summary('the promotion history, newest first')
    .description('Promotions of a project (default: your own), newest first: when, where, which version replaced which, who, and why.')
    .usage('[--project P] [--env E] [--group G] [--artifact A] [--page N] [--size N]')
    .option('--project <name>', 'the project (default: your own)')
    .option('--env <environment>', 'only promotions into this environment')
    .option('--group <groupId>', 'only this group')
    .option('--artifact <artifactId>', 'only this artifact')
    .option('--page <n>', 'page, from 1')
    .option('--size <n>', `promotions per page (1 to ${PAGE_SIZE_MAX})`)
    .addHelpText('after', example('repoadmin promotions --project shop --env prod'))
    .action(action<PromotionsFlags, PromotionsOptions>(deps, (flags) => parsePromotionsFlags(flags), run));
}

export async function runPromotions(opts: PromotionsOptions, deps: Pick<Deps, 'api'>): Promise<Report> {
  const projectName = opts.project ?? (await deps.api.projectName()) ?? undefined;
  const answer = await deps.api.promotions({
    projectName,
    environment: opts.environment,
    groupId: opts.groupId,
    artifactId: opts.artifactId,
    page: opts.page,
    size: opts.size,
  });
  const { promotions, page } = answer;
  return {
    json: answer,
    table: {
      head: ['WHEN', 'ENVIRONMENT', 'ARTIFACT', 'VERSION', 'REPLACED', 'BY', 'COMMENT'],
      rows: promotions.map((p) => [
        shortTime(p.promotedAt),
        p.environment,
        `${p.groupId}:${p.artifactId}`,
        p.rollback ? `${p.version} (rollback)` : p.version,
        p.previousVersion ?? '-',
        p.promotedBy.username ?? '-',
        p.comment,
      ]),
    },
    notes:
      promotions.length === 0
        ? ['No promotions match.']
        : page.totalPages > page.currentPage
          ? [`Page ${page.currentPage} of ${page.totalPages} (${page.totalElements} promotions): --page ${page.currentPage + 1} for more.`]
          : [],
  };
}
