// What a comment cites, a reader can open: every document a source file names (`docs/api.md`,
// `README.md`, ...) is in the repository, every section it names in quotes
// (`docs/api.md, "Faults"`) is a heading there, and the links between the files of docs/ resolve.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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
