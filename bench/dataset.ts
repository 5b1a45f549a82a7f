// The benchmark's data: years of pipelines publishing into one registry, generated deterministically.
//
// 50 projects own 200 groups (4 each) of 10 artifacts: 2,000 artifacts. Every artifact is built on
// 5 branches, so there are 10,000 keys (project, artifact, branch). Record i belongs to key
// i % KEYS and is that key's (i / KEYS)-th version, in publishing order: creation dates grow with i,
// and the last record of each key is its latest one.
//
// Besides them, one artifact has a long history: LONG_HISTORY versions on one branch, the last one
// latest, where a lookup that reads the key's whole history instead of its latest record shows.
import type { VersionFields } from '../server/db/versions.js';

export const PROJECTS = 50;
export const GROUPS = 200;
export const ARTIFACTS_PER_GROUP = 10;
export const ARTIFACTS = GROUPS * ARTIFACTS_PER_GROUP;
export const BRANCHES = ['main', 'develop', 'release/2.x', 'feature/search-index', 'hotfix/1.x'] as const;
export const KEYS = ARTIFACTS * BRANCHES.length;

/** The first record's creation date; records follow every `CREATION_STEP_MS`. */
const FIRST_CREATION = Date.UTC(2019, 2, 2, 20, 30, 35, 420);
const CREATION_STEP_MS = 150_000;

const WORDS = [
  'cache', 'index', 'parser', 'client', 'gateway', 'ledger', 'billing', 'search', 'render', 'queue',
  'scheduler', 'audit', 'report', 'export', 'import', 'auth', 'session', 'profile', 'catalog', 'pricing',
];
const CHANGES = [
  'Faster start-up when the configuration folder is large',
  'Retry transient network failures with backoff',
  'Fix a race between shutdown and in-flight requests',
  'Upgrade the logging library',
  'Drop support for the deprecated v1 settings file',
  'Add metrics for queue depth and processing time',
  'Validate input lengths before writing to the store',
  'Reduce memory use of the export job by streaming rows',
  'Document the new environment variables',
  'Handle empty pages in the paginated client',
];
const TYPES = ['LIBRARY', 'LIBRARY', 'LIBRARY', 'LIBRARY', 'LIBRARY', 'LIBRARY', 'LIBRARY', 'SERVICE', 'SERVICE', 'CONTAINER'];

/** A small deterministic pseudo-random sequence (mulberry32), so every run seeds the same data. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function projectName(project: number): string {
  return `project-${String(project).padStart(2, '0')}`;
}

export function groupId(group: number): string {
  return `com.acme.${WORDS[group % WORDS.length]}.g${String(group).padStart(3, '0')}`;
}

export interface ArtifactKey {
  projectName: string;
  groupId: string;
  artifactId: string;
  branch: string;
}

/** The key of record i: artifact and branch, and the project that owns the artifact's group. */
export function keyOf(key: number): ArtifactKey {
  const artifact = key % ARTIFACTS;
  const branch = BRANCHES[Math.floor(key / ARTIFACTS) % BRANCHES.length]!;
  const group = Math.floor(artifact / ARTIFACTS_PER_GROUP);
  return {
    projectName: projectName(group % PROJECTS),
    groupId: groupId(group),
    artifactId: `${WORDS[artifact % WORDS.length]}-${WORDS[(artifact * 7 + 3) % WORDS.length]}-a${String(artifact).padStart(4, '0')}`,
    branch,
  };
}

/**
 * The n-th version of a key, in the style its branch publishes: releases on main and hotfix,
 * release candidates then the release on release branches, Maven snapshots on develop and
 * pre-releases on feature branches. Unique per key.
 */
export function versionOf(branch: string, n: number): string {
  switch (branch) {
    case 'main':
      return `${1 + Math.floor(n / 100)}.${Math.floor(n / 10) % 10}.${n % 10}`;
    case 'release/2.x':
      return n % 4 === 3 ? `2.${Math.floor(n / 4)}.0` : `2.${Math.floor(n / 4)}.0-rc.${(n % 4) + 1}`;
    case 'develop':
      return `3.${n}.0-SNAPSHOT`;
    case 'hotfix/1.x':
      return `1.${Math.floor(n / 10)}.${n % 10}.1`;
    default:
      return n % 2 === 0 ? `3.${n >> 1}.0-alpha.${n % 7}` : `3.${n >> 1}.0-beta.${n % 5}`;
  }
}

function description(key: ArtifactKey, version: string, next: () => number): string {
  const changes = [0, 1, 2].map(() => `- ${CHANGES[Math.floor(next() * CHANGES.length)]}`);
  return [
    `## ${key.artifactId} ${version}`,
    '',
    `Built from \`${key.branch}\` by the **${key.projectName}** pipeline.`,
    '',
    '### Changes',
    '',
    ...changes,
    '',
    `See [the changelog](https://git.example.com/${key.projectName}/${key.artifactId}/-/blob/${key.branch}/CHANGELOG.md).`,
  ].join('\n');
}

/** Record i of a data set of `total` records. */
export function recordOf(i: number, total: number): VersionFields {
  const key = keyOf(i % KEYS);
  const n = Math.floor(i / KEYS);
  const version = versionOf(key.branch, n);
  const next = random(i + 1);
  return {
    ...key,
    version,
    repositoryUrl: `https://git.example.com/${key.projectName}/${key.artifactId}.git`,
    creationDate: new Date(FIRST_CREATION + i * CREATION_STEP_MS),
    type: TYPES[i % TYPES.length]!,
    latestVersion: i + KEYS >= total,
    description: description(key, version, next),
  };
}

/** The artifact with the long history: its own group, on main, owned by the first project. */
export const LONG_HISTORY_KEY: ArtifactKey = { projectName: projectName(0), groupId: 'com.acme.history', artifactId: 'long-history', branch: 'main' };
/** How many versions it has by default (--long-history). */
export const LONG_HISTORY = 20_000;

/** Version n of the long history of `versions` versions; the last is latest. */
export function longHistoryRecordOf(n: number, versions: number): VersionFields {
  const version = versionOf(LONG_HISTORY_KEY.branch, n);
  return {
    ...LONG_HISTORY_KEY,
    version,
    repositoryUrl: `https://git.example.com/${LONG_HISTORY_KEY.projectName}/${LONG_HISTORY_KEY.artifactId}.git`,
    creationDate: new Date(FIRST_CREATION + n * CREATION_STEP_MS),
    type: 'LIBRARY',
    latestVersion: n === versions - 1,
    description: description(LONG_HISTORY_KEY, version, random(n + 1)),
  };
}

/** Record i of a data set of `total` records followed by a long history of `longHistory` versions. */
export function seededRecordOf(i: number, total: number, longHistory: number): VersionFields {
  return i < total ? recordOf(i, total) : longHistoryRecordOf(i - total, longHistory);
}

/**
 * The i-th new version of the publish load (i is unique within a benchmark run, so every publish
 * makes a new record); keys are spread over all artifacts, and every second publish is a latest one.
 */
export function publishedRecord(i: number): Record<string, unknown> {
  const key = keyOf((i * 7919) % KEYS);
  const version = `100.${i}.0`;
  return {
    projectName: key.projectName,
    branch: key.branch,
    artifact: { groupId: key.groupId, artifactId: key.artifactId, version },
    repositoryUrl: `https://git.example.com/${key.projectName}/${key.artifactId}.git`,
    type: 'LIBRARY',
    latestVersion: i % 2 === 0,
    description: description(key, version, random(i)),
  };
}
