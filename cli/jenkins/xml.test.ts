import { describe, expect, it } from 'vitest';
import type { JobSpec } from './model.js';
import { jobXml, sortedJobNames } from './xml.js';

const multibranch = (logRotator: JobSpec['logRotator']): JobSpec => ({
  kind: 'multibranch',
  name: 'app',
  description: '',
  view: undefined,
  scriptPath: 'Jenkinsfile',
  git: { repositoryId: 'app', url: 'https://git.example.com/app.git', trigger: undefined, credentialsId: undefined },
  cronTrigger: undefined,
  authToken: undefined,
  branch: undefined,
  logRotator,
});

const prune = (xml: string) => /<pruneDeadBranches>(\w+)<\/pruneDeadBranches>/.exec(xml)?.[1];

describe('multibranch orphaned item strategy', () => {
  // DefaultOrphanedItemStrategy removes every dead branch at once when it prunes with neither a
  // day nor a count limit: unlimited (both null) must not prune at all.
  it('keeps the jobs of deleted branches when both limits are unlimited', () => {
    expect(prune(jobXml(multibranch({ daysToKeep: -1, numToKeep: -1 }), ''))).toBe('false');
    expect(prune(jobXml(multibranch(null), ''))).toBe('false');
  });

  it('prunes when either limit is set', () => {
    expect(prune(jobXml(multibranch({ daysToKeep: 30, numToKeep: -1 }), ''))).toBe('true');
    expect(prune(jobXml(multibranch({ daysToKeep: -1, numToKeep: 3 }), ''))).toBe('true');
  });
});

// ListView.jobNames is a TreeSet ordered by String.compareToIgnoreCase: by the code of each char
// folded to upper, then lower case, one char each (ß stays ß, 223, and sorts after t, 116).
describe('sortedJobNames', () => {
  it('orders view job names as Jenkins writes them back', () => {
    expect(sortedJobNames(['b', 'A', 'a-b', 'a_b', 'ß', 't', 'İ', 'h'])).toEqual(['A', 'a-b', 'a_b', 'b', 'h', 'İ', 't', 'ß']);
  });
});
