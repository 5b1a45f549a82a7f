// What `jobs diff` and `jobs apply` share: the file read and checked once, Jenkins reached only
// after that (a broken file never reaches it, nor stdin's token), and the plan made against it.
import { createJenkinsClient, type JenkinsClient, type JenkinsConnection } from './client.js';
import { loadDefinitions, type FileInput } from './load.js';
import { planSync, type Plan, type PlanOptions } from './plan.js';

/** Changes and reads in parallel unless --concurrency says otherwise. */
export const DEFAULT_CONCURRENCY = 4;

/** Jenkins handles a few parallel changes well; many more only queue up on its side. */
export const MAX_CONCURRENCY = 32;

export interface Planned {
  plan: Plan;
  client: JenkinsClient;
}

export async function planFromFile(
  input: FileInput,
  options: Omit<PlanOptions, 'sourceId'>,
  connect: () => Promise<JenkinsConnection>,
  env: NodeJS.ProcessEnv,
): Promise<Planned> {
  const { sourceId, definitions } = await loadDefinitions(input, env);
  const client = createJenkinsClient(await connect());
  return { plan: await planSync(definitions, client, { ...options, sourceId }), client };
}
