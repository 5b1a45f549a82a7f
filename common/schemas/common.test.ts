// The paging fields of every paged answer are one schema and one function (PageInfo, pageInfo).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PageInfo, pageInfo } from './common.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(full);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

describe('pageInfo', () => {
  it('counts the pages of the requested size, the last one partly filled', () => {
    expect(pageInfo(21, { page: 3, size: 10 }, 1)).toEqual({ totalElements: 21, totalPages: 3, currentPage: 3, numberOfElements: 1 });
    expect(pageInfo(20, { page: 1, size: 10 }, 10)).toMatchObject({ totalPages: 2 });
    expect(PageInfo.parse(pageInfo(0, { page: 1, size: 20 }, 0))).toEqual({ totalElements: 0, totalPages: 0, currentPage: 1, numberOfElements: 0 });
  });

  it('is the only place the server and the schemas write the paging fields', () => {
    const writers = ['server', 'common'].flatMap((layer) => tsFiles(path.join(ROOT, layer)))
      .filter((file) => /\btotalPages\s*:/.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(ROOT, file).split(path.sep).join('/'));
    expect(writers).toEqual(['common/schemas/common.ts']);
  });
});
