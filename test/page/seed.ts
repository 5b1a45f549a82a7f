// The version records the page test publishes, and what the page should show for them.
import type { TestServer } from '../helpers/server.js';

export interface Seed {
  projectName: string;
  branch: string;
  groupId: string;
  artifactId: string;
  version: string;
  type: string;
  latestVersion: boolean;
  creationDate: string;
  repositoryUrl?: string;
  description?: string;
  /** Filled in by publish(). */
  uid: string;
}

/** The fixture of docs/api.md, "Version order", ascending (without the spellings that compare equal to 1.0.0). */
export const VERSION_ORDER = [
  '1.0.0-alpha', '1.0.0-alpha.1', '1.0.0-beta', '1.0.0-beta.2', '1.0.0-beta.11', '1.0.0-M1', '1.0.0-rc.1',
  '1.0.0-RC2', '1.0.0-SNAPSHOT', '1.0.0', '1.0.1', '1.1', '1.2.0-SNAPSHOT', '1.2.0', '1.9.0', '1.10.0',
  '1.10.0.1', '2.0.0', '2019.03',
];

/** A description that tries every way of running code or loading from elsewhere. */
export const HOSTILE_DESCRIPTION = [
  '# Release notes',
  '',
  '<script>window.__xss = "script"; alert("script")</script>',
  '',
  '<img src="x" onerror="window.__xss = \'img\'; alert(\'img\')">',
  '',
  '[click me](javascript:alert("markdown-link"))',
  '',
  '<a href="javascript:alert(\'a\')">raw link</a> <a href=" JaVaScRiPt:alert(1)">mixed case</a>',
  '',
  '<svg onload="alert(\'svg\')"><circle r="5"/></svg><iframe src="javascript:alert(\'iframe\')"></iframe>',
  '',
  '<p onclick="alert(\'p\')" style="background:url(https://tracker.example/bg.png)">styled paragraph</p>',
  '',
  '![tracking pixel](https://tracker.example/pixel.png)',
  '',
  '**bold words** and `code <script>alert(1)</script>`',
  '',
  // A checksum column: one long word that must not widen the page.
  '| file | sha512 |',
  '|---|---|',
  `| app.jar | ${'0123456789abcdef'.repeat(25)} |`,
].join('\n');

const RICH_DESCRIPTION = [
  '## Web UI 4.2.0',
  '',
  'The dashboard now loads **twice as fast** on large projects.',
  '',
  '- Keyboard shortcuts for the search box',
  '- Dark theme follows the system setting',
  '- Fixed: dates shown in UTC instead of local time',
  '',
  '```sh',
  'npm install @acme/web-ui@4.2.0',
  '```',
  '',
  'See the [changelog](https://git.acme.test/atlas/web-ui/-/blob/main/CHANGELOG.md).',
].join('\n');

const START = Date.UTC(2026, 2, 1, 8, 0, 0);

function build(): Seed[] {
  const seeds: Seed[] = [];
  let minute = 0;
  const add = (seed: Omit<Seed, 'uid' | 'creationDate' | 'type' | 'latestVersion'> & Partial<Pick<Seed, 'type' | 'latestVersion'>>) => {
    seeds.push({
      type: 'LIBRARY',
      latestVersion: true,
      ...seed,
      creationDate: new Date(START + minute++ * 60_000).toISOString(),
      uid: '',
    });
  };
  // Published out of version order, each as the latest: the last one published stays latest.
  const scrambled = [...VERSION_ORDER].sort((a, b) => (a.length * 7 + a.charCodeAt(a.length - 1)) % 11 - (b.length * 7 + b.charCodeAt(b.length - 1)) % 11);
  for (const version of scrambled) {
    add({ projectName: 'atlas', branch: 'main', groupId: 'com.acme.platform', artifactId: 'core', version, repositoryUrl: 'https://git.acme.test/atlas/core.git' });
  }
  for (const version of ['2.1.0-SNAPSHOT', '2.1.0-rc.1']) {
    add({ projectName: 'atlas', branch: 'develop', groupId: 'com.acme.platform', artifactId: 'core', version, repositoryUrl: 'git@git.acme.test:atlas/core.git' });
  }
  add({ projectName: 'atlas', branch: 'main', groupId: 'com.acme.platform', artifactId: 'web-ui', version: '4.1.3', type: 'WEBAPP' });
  add({ projectName: 'atlas', branch: 'main', groupId: 'com.acme.platform', artifactId: 'web-ui', version: '4.2.0', type: 'WEBAPP', description: RICH_DESCRIPTION, repositoryUrl: 'https://git.acme.test/atlas/web-ui.git' });
  add({ projectName: 'borealis', branch: 'main', groupId: 'com.acme.tools', artifactId: 'cli', version: '3.4.0', type: 'APPLICATION' });
  add({ projectName: 'borealis', branch: 'main', groupId: 'com.acme.tools', artifactId: 'cli', version: '3.4.1', type: 'APPLICATION', description: HOSTILE_DESCRIPTION });
  // A branch without any latest record: never in the latest-only view.
  add({ projectName: 'borealis', branch: 'release/1.x', groupId: 'com.acme.tools', artifactId: 'cli', version: '1.9.7', type: 'APPLICATION', latestVersion: false });
  add({ projectName: 'borealis', branch: 'release/1.x', groupId: 'com.acme.tools', artifactId: 'cli', version: '1.9.8', type: 'APPLICATION', latestVersion: false });
  for (const artifactId of ['ingest', 'query-engine', 'schema-registry']) {
    for (const version of ['0.8.0', '0.9.0']) {
      add({ projectName: 'delta', branch: 'main', groupId: 'io.delta.data', artifactId, version, type: 'SERVICE', description: `Release ${version} of *${artifactId}*.` });
    }
  }
  // More than the largest page, to page through.
  for (let i = 0; i < 120; i++) {
    add({ projectName: 'cobalt', branch: 'main', groupId: 'org.example.services', artifactId: 'payments', version: `3.0.${i}`, type: 'SERVICE' });
  }
  return seeds;
}

export const SEEDS: readonly Seed[] = build();

/** Publishes the seeds in order through the API (records of one key one after another). */
export async function publish(server: TestServer, seeds: readonly Seed[] = SEEDS): Promise<void> {
  const token = await server.adminToken();
  const byKey = new Map<string, Seed[]>();
  for (const seed of seeds) {
    const key = latestKey(seed);
    byKey.set(key, [...(byKey.get(key) ?? []), seed]);
  }
  await Promise.all(
    [...byKey.values()].map(async (group) => {
      for (const seed of group) {
        const { uid: _uid, groupId, artifactId, version, ...rest } = seed;
        const res = await server.request('POST', '/v1/repositories', { token, body: { ...rest, artifact: { groupId, artifactId, version } } });
        if (res.status !== 201) throw new Error(`publish failed: ${res.status} ${res.text}`);
        seed.uid = res.body.uid as string;
      }
    }),
  );
}

export function latestKey(seed: Pick<Seed, 'projectName' | 'groupId' | 'artifactId' | 'branch'>): string {
  return `${seed.projectName}|${seed.groupId}|${seed.artifactId}|${seed.branch}`;
}

/** The records that stay latest: the last one published with the flag, per key. */
export function latestSeeds(seeds: readonly Seed[] = SEEDS): Seed[] {
  const latest = new Map<string, Seed>();
  for (const seed of seeds) if (seed.latestVersion) latest.set(latestKey(seed), seed);
  return [...latest.values()];
}

export function coordinates(seed: Pick<Seed, 'groupId' | 'artifactId' | 'version'>): string {
  return `${seed.groupId}:${seed.artifactId}:${seed.version}`;
}
