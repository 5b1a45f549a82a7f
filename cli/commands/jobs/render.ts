// `repoadmin jobs render [file] [--out DIR]`: each job's, folder's and view's config.xml, no server.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import type { Deps } from '../../deps.js';
import type { Report } from '../../output/index.js';
import { loadDefinitions, type FileInput } from '../../jenkins/load.js';
import { desiredItems } from '../../jenkins/plan.js';
import { action } from '../support.js';
import { fileCommand, fileInput, type FileFlags } from './shared.js';

/** Views go under a name no job can have (`@` is not allowed in Jenkins names). */
export const VIEWS_DIR = '@views';

export interface RenderOptions {
  input: FileInput;
  out: string | undefined;
}

export interface RenderedConfig {
  kind: 'folder' | 'job' | 'view';
  name: string;
  /** Where it was written, with --out. */
  path?: string;
  xml: string;
}

export function renderCommand(deps: Deps, run = runRender): Command {
  return fileCommand('render', 'write the config.xml of every job and view')
    .description(
      'Write the config.xml of every job, folder and view of the file, without any server: ' +
        `DIR/<job>/config.xml and DIR/${VIEWS_DIR}/<view>/config.xml with --out, else print them.`,
    )
    .option('--out <dir>', 'write the files under this directory')
    .addHelpText('after', '\nExample:\n  repoadmin jobs render jenkins-dsl-jobs.json --out build/jobs')
    .action(action<FileFlags & { out?: string }, RenderOptions>(deps, (flags, [file]) => ({ input: fileInput(file, flags), out: flags.out }), run));
}

export async function runRender(options: RenderOptions, deps: Pick<Deps, 'env' | 'settings'>): Promise<Report> {
  const { sourceId, definitions } = await loadDefinitions(options.input, deps.env);
  const configs: RenderedConfig[] = desiredItems(definitions, sourceId).map((item) => ({ kind: item.kind, name: item.name, xml: item.xml ?? '' }));
  // One config after another, a blank line between them (each ends with a line break).
  if (!options.out) return { json: configs, lines: [configs.map((c) => `<!-- ${c.kind} ${c.name} -->\n${c.xml}`).join('\n')] };
  for (const config of configs) {
    const dir = config.kind === 'view' ? join(options.out, VIEWS_DIR, config.name) : join(options.out, ...config.name.split('/'));
    config.path = join(dir, 'config.xml');
    await mkdir(dirname(config.path), { recursive: true });
    await writeFile(config.path, config.xml);
  }
  // With --json the data names every path already.
  const notes = deps.settings.json ? [] : [`wrote ${configs.length} config.xml files under ${options.out}`];
  return { json: configs, lines: configs.map((c) => c.path!), notes };
}
