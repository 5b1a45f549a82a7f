// What a comment cites, a reader can open: every document a source file names (`docs/api.md`,
// `README.md`, ...) is in the repository, every section it names in quotes
// (`docs/api.md, "Faults"`) is a heading there, the links between the files of docs/ resolve, and
// every repository path README.md and docs/ name (`server/http/pipeline.ts`, `cli/commands/jobs/`) exists.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS } from '../common/schemas/audit.js';
import { TOKEN_SCOPES } from '../common/schemas/tokens.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_DIRS = ['cli', 'server', 'common', 'public/src', 'test', 'scripts', 'bench'];
const SOURCE_FILE = /\.(?:[cm]?[jt]s|css|html)$/;
const THIS_FILE = fileURLToPath(import.meta.url);

/** A document name: `api.md`, `docs/cli.md`, `../../README.md`; not the tail of a URL or a longer path. */
const DOCUMENT = /(?<![\w/.-])((?:\.{1,2}\/|[\w-][\w.-]*\/)*[\w-][\w.-]*\.md)\b/g;
/** A document and one of its sections: `docs/api.md, "Faults"` or `docs/api.md ("Version order")`. */
const SECTION = /(?<![\w/.-])((?:[\w-][\w.-]*\/)*[\w-][\w.-]*\.md)(?:,\s*|\s*\()"([^"]+)"/g;
/** The specification we were given is not in the repository: its rules are restated in docs/. */
const SPECIFICATION = /seed-spec/gi;

function sourceFiles(dir: string): string[] {
  const full = path.join(ROOT, dir);
  if (!existsSync(full)) return [];
  return readdirSync(full, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && SOURCE_FILE.test(entry.name))
    .map((entry) => path.join(entry.parentPath, entry.name))
    .filter((file) => !file.split(path.sep).includes('node_modules'));
}

/** Where a named document is: beside the naming file, at the root, or under docs/. */
function resolveDocument(name: string, from: string): string | undefined {
  return [path.resolve(path.dirname(from), name), path.join(ROOT, name), path.join(ROOT, 'docs', name)].find((p) =>
    existsSync(p),
  );
}

function headings(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => line.replace(/^#+ /, '').trim());
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function anchor(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The problems of one source text, as `file: problem` lines. */
export function citationProblems(text: string, file: string): string[] {
  const where = path.relative(ROOT, file);
  const problems: string[] = [];
  for (const [, name] of text.matchAll(DOCUMENT)) {
    if (!resolveDocument(name!, file)) problems.push(`${where}: names ${name}, which is not in the repository`);
  }
  for (const [, name, section] of text.matchAll(SECTION)) {
    const document = resolveDocument(name!, file);
    if (document && !headings(document).includes(section!)) {
      problems.push(`${where}: cites "${section}" of ${name}, which has no such heading`);
    }
  }
  for (const [match] of text.matchAll(SPECIFICATION)) {
    problems.push(`${where}: names ${match}, which is not in the repository: cite the section of docs/ that states the rule`);
  }
  return problems;
}

describe('documents named in the source', () => {
  it('finds a missing document, a missing section and the specification (so the check below can fail)', () => {
    const file = path.join(ROOT, 'server', 'example.ts');
    const text = [
      '// see spec/api.md (the old place), docs/api.md, "No such section" and seed-spec.md',
      '// fine: docs/api.md, "Faults"; README.md; https://git.example.com/x/-/blob/main/CHANGELOG.md',
    ].join('\n');
    expect(citationProblems(text, file)).toEqual([
      'server/example.ts: names spec/api.md, which is not in the repository',
      'server/example.ts: names seed-spec.md, which is not in the repository',
      'server/example.ts: cites "No such section" of docs/api.md, which has no such heading',
      'server/example.ts: names seed-spec, which is not in the repository: cite the section of docs/ that states the rule',
    ]);
  });

  it('are all in the repository, with the sections they cite', () => {
    const files = SOURCE_DIRS.flatMap(sourceFiles).filter((file) => file !== THIS_FILE);
    expect(files.length).toBeGreaterThan(100);
    const problems = files.flatMap((file) => citationProblems(readFileSync(file, 'utf8'), file));
    expect(problems).toEqual([]);
  });
});

/** The repository's own top-level folders: every folder at the root but git's and what .gitignore leaves out (dist/, node_modules/). */
function repositoryFolders(): Set<string> {
  const ignored = readFileSync(path.join(ROOT, '.gitignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => /^[\w.-]+\/$/.test(line))
    .map((line) => line.slice(0, -1));
  return new Set(
    readdirSync(ROOT, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && entry.name !== '.git' && !ignored.includes(entry.name))
      .map((entry) => entry.name),
  );
}

/** What a Markdown text names in backticks, outside its fenced blocks (commands and examples). */
function inlineCode(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```/gm, '');
  return [...prose.matchAll(/`([^`\n]+)`/g)].map(([, code]) => code!);
}

/**
 * The problems of one Markdown file's repository paths, as `file: problem` lines. A repository path
 * is a backticked name whose first part is a top-level folder of the repository
 * (`server/http/pipeline.ts`, `cli/commands/jobs/`, `.ci/run`), or a backticked document (`api.md`,
 * `docs/cli.md`, found beside the file, at the root or under docs/), or the target of a relative link.
 * A pattern or a placeholder (`server/routes/v1/<resource>.ts`, `cli/jenkins/*`) names no one file,
 * and a command (`npx vitest run test/docs.test.ts`, with a space) is not a name: neither is checked.
 */
export function pathProblems(text: string, file: string, folders: Set<string> = repositoryFolders()): string[] {
  const where = path.relative(ROOT, file);
  const problems: string[] = [];
  for (const code of inlineCode(text)) {
    if (/[\s<>*{}$]|\.\.\.|:\/\//.test(code)) continue;
    const named = code.replace(/\/$/, '');
    if (folders.has(named.split('/')[0]!) && named.includes('/')) {
      if (!existsSync(path.join(ROOT, named))) problems.push(`${where}: names ${code}, which is not in the repository`);
    } else if (/^(?:[\w-][\w.-]*\/)*[\w-][\w.-]*\.md$/.test(named) && !resolveDocument(named, file)) {
      problems.push(`${where}: names ${code}, which is not in the repository`);
    }
  }
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target!)) continue;
    const [linked = ''] = target!.split('#');
    if (linked !== '' && !existsSync(path.resolve(path.dirname(file), linked))) {
      problems.push(`${where}: links to ${linked}, which is not in the repository`);
    }
  }
  return problems;
}

describe('repository paths named in README.md and docs/', () => {
  const files = [
    path.join(ROOT, 'README.md'),
    ...readdirSync(path.join(ROOT, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => path.join(ROOT, 'docs', name)),
  ];

  it('finds a missing file, folder, document and link target (so the check below can fail)', () => {
    const file = path.join(ROOT, 'docs', 'example.md');
    const text = [
      'Missing: `server/http/no-such-file.ts`, `cli/commands/no-such-folder/`, `bench/results/1999-01-01.md`,',
      '`no-such.md`, [a link](../server/nowhere.ts#top).',
      'There: `server/http/pipeline.ts`, `cli/commands/jobs/`, `.ci/run`, `api.md`, `docs/cli.md`, [cli](cli.md#exit-codes).',
      'Not paths: `server/routes/v1/<resource>.ts`, `cli/jenkins/*`, `npx vitest run test/none.test.ts`, `config.json`,',
      '`dist/repoadmin.cjs` (built, not kept), `/proc/<pid>/smaps`, `https://example.com/server/x.ts`.',
      '```sh',
      'cat server/in-a-fence.ts `server/in-a-fence.ts`',
      '```',
    ].join('\n');
    expect(pathProblems(text, file)).toEqual([
      'docs/example.md: names server/http/no-such-file.ts, which is not in the repository',
      'docs/example.md: names cli/commands/no-such-folder/, which is not in the repository',
      'docs/example.md: names bench/results/1999-01-01.md, which is not in the repository',
      'docs/example.md: names no-such.md, which is not in the repository',
      'docs/example.md: links to ../server/nowhere.ts, which is not in the repository',
    ]);
  });

  it('are all in the repository', () => {
    expect(files.length).toBeGreaterThan(10);
    const folders = repositoryFolders();
    expect([...folders]).toEqual(expect.arrayContaining(['server', 'cli', 'common', 'bench', 'docs', '.ci']));
    expect(folders.has('dist')).toBe(false);
    expect(files.flatMap((file) => pathProblems(readFileSync(file, 'utf8'), file, folders))).toEqual([]);
  });

  it("README.md's links point at headings that exist", () => {
    const file = path.join(ROOT, 'README.md');
    const problems: string[] = [];
    for (const [, target] of readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
      const [linked = '', fragment] = target!.split('#');
      if (/^[a-z]+:/i.test(target!) || fragment === undefined) continue;
      const document = linked === '' ? file : path.resolve(ROOT, linked);
      if (existsSync(document) && !headings(document).map(anchor).includes(fragment)) {
        problems.push(`README.md: links to #${fragment} of ${linked || 'README.md'}, which has no such heading`);
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('links between the files of docs/', () => {
  const docs = readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));

  it('holds the contract (the index, the API, the command line, the jobs file, operations), each file listed in the index', () => {
    expect(docs).toEqual(expect.arrayContaining(['README.md', 'api.md', 'cli.md', 'jobs.md', 'operations.md']));
    const index = readFileSync(path.join(ROOT, 'docs', 'README.md'), 'utf8');
    expect(docs.filter((name) => name !== 'README.md' && !index.includes(`](${name})`))).toEqual([]);
  });

  it('point at files and headings that exist', () => {
    const problems: string[] = [];
    for (const name of docs) {
      const file = path.join(ROOT, 'docs', name);
      for (const [, target] of readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        const [linked = '', fragment] = target!.split('#');
        const document = linked === '' ? file : path.resolve(path.dirname(file), linked);
        if (!existsSync(document)) problems.push(`docs/${name}: links to ${linked}, which does not exist`);
        else if (fragment !== undefined && !headings(document).map(anchor).includes(fragment)) {
          problems.push(`docs/${name}: links to #${fragment} of ${linked || name}, which has no such heading`);
        }
      }
    }
    expect(problems).toEqual([]);
  });
});

describe('closed sets written out in docs/', () => {
  const docs = readdirSync(path.join(ROOT, 'docs')).filter((name) => name.endsWith('.md'));

  it('every choice of --scope names each token scope', () => {
    const problems: string[] = [];
    for (const name of docs) {
      const text = readFileSync(path.join(ROOT, 'docs', name), 'utf8');
      const choices = [
        ...[...text.matchAll(/--scope ([a-z]+(?:\|[a-z]+)+)/g)].map((m) => m[1]!.split('|')),
        ...[...text.matchAll(/`--scope` is ((?:`[a-z]+`(?:, | or )?)+)/g)].map((m) => [...m[1]!.matchAll(/`([a-z]+)`/g)].map((w) => w[1]!)),
      ];
      for (const listed of choices) {
        if ([...listed].sort().join() !== [...TOKEN_SCOPES].sort().join()) problems.push(`docs/${name}: --scope ${listed.join('|')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it("docs/webhooks.md's table of audit actions names each action once", () => {
    const text = readFileSync(path.join(ROOT, 'docs', 'webhooks.md'), 'utf8');
    const section = text.slice(text.indexOf('\n## Audit log'));
    const rows = [...section.matchAll(/^\| `([a-z_.]+)` \|/gm)].map((m) => m[1]!);
    expect(rows.sort()).toEqual([...AUDIT_ACTIONS].sort());
  });
});
