// `repoadmin jobs validate [file]`: checks the file only; all its problems at once.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { loadDefinitions, type FileInput } from '../../jenkins/load.js';
import { action } from '../support.js';
import { fileCommand, fileInput, type FileFlags } from './shared.js';

export interface ValidateOptions {
  input: FileInput;
}

export interface ValidateResult {
  file: string;
  sourceId: string;
  pipelineJobs: number;
  multiBranchJobs: number;
  folders: string[];
  views: string[];
}

export function validateCommand(deps: Deps, run = runValidate): Command {
  return fileCommand('validate', 'check a job definition file')
    .description('Check a job definition file: schema, cron specs, names, duplicates. Exit 0, or 1 with every problem.')
    .addHelpText('after', '\nExample:\n  repoadmin jobs validate jenkins-dsl-jobs.json')
    .action(action<FileFlags, ValidateOptions>(deps, (flags, [file]) => ({ input: fileInput(file, flags) }), run));
}

export async function runValidate(options: ValidateOptions, deps: Pick<Deps, 'env'>): Promise<Report> {
  const { fileName, sourceId, definitions } = await loadDefinitions(options.input, deps.env);
  const result: ValidateResult = {
    file: fileName,
    sourceId,
    pipelineJobs: definitions.jobs.filter((job) => job.kind === 'pipeline').length,
    multiBranchJobs: definitions.jobs.filter((job) => job.kind === 'multibranch').length,
    folders: definitions.folders,
    views: [...definitions.views.keys()],
  };
  const text =
    `${result.file}: valid: ${result.pipelineJobs} pipeline, ${result.multiBranchJobs} multibranch jobs, ` +
    `${result.folders.length} folders, ${result.views.length} views (source ${result.sourceId})`;
  return { json: result, lines: [{ text, tone: 'added' }] };
}
