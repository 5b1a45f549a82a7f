// A live config against the file's, compared once: equal, or the unified diff of both normalised
// configs with secrets masked, which the plan item keeps for every way the plan is shown.
import { createTwoFilesPatch } from 'diff';
import { normalizeXml, sameConfig, withKnownToken } from './normalize.js';

export type Comparison = { equal: true } | { equal: false; diff: string };

/** `label` names the item in the diff's header, e.g. `job team/app`. */
export function compareConfig(label: string, live: string, desired: string): Comparison {
  const settled = withKnownToken(live, desired);
  if (sameConfig(settled, desired)) return { equal: true };
  const patch = createTwoFilesPatch(
    `jenkins: ${label}`,
    `file: ${label}`,
    normalizeXml(settled, { mask: true }),
    normalizeXml(desired, { mask: true }),
    undefined,
    undefined,
    { context: 3 },
  );
  const diff = patch
    .split('\n')
    .filter((line) => !line.startsWith('====='))
    .join('\n')
    .trimEnd();
  return { equal: false, diff };
}
