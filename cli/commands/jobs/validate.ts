// `repoadmin jobs validate <file>`: checks the file only; all its problems at once.
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import { loadDefinitions, type FileInput } from '../../jobs/load.js';
import { fileCommand, fileInput, outputFlags, type FileFlags } from './shared.js';

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

export function validateCommand(deps: Deps): Command {
  return fileCommand('validate', 'check a job definition file')
    .description('Check a job definition file: schema, cron specs, names, duplicates. Exit 0, or 1 with every problem.')
    .addHelpText('after', '\nExample:\n  repoadmin jobs validate jenkins-dsl-jobs.json')
    .action(async (file: string | undefined, flags: FileFlags, command: Command) => {
      const result = await runValidate({ input: fileInput(file, flags) }, deps);
      const { json } = outputFlags(command);
      deps.io.out(json ? JSON.stringify(result, null, 2) : validateText(result));
    });
}

export async function runValidate(options: ValidateOptions, deps: Pick<Deps, 'env'>): Promise<ValidateResult> {
  const { fileName, sourceId, definitions } = await loadDefinitions(options.input, deps.env);
  return {
    file: fileName,
    sourceId,
    pipelineJobs: definitions.jobs.filter((job) => job.kind === 'pipeline').length,
    multiBranchJobs: definitions.jobs.filter((job) => job.kind === 'multibranch').length,
    folders: definitions.folders,
    views: [...definitions.views.keys()],
  };
}

function validateText(result: ValidateResult): string {
  return (
    `${result.file}: valid: ${result.pipelineJobs} pipeline, ${result.multiBranchJobs} multibranch jobs, ` +
    `${result.folders.length} folders, ${result.views.length} views (source ${result.sourceId})`
  );
}
