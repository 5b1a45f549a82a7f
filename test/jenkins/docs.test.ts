// The example file of docs/jobs.md, "Replacing a seed job", is valid, and renders both job kinds and the view;
// the ownership markers docs/jobs.md shows are the ones the code writes.
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { markerOf, withMarker } from '../../cli/jenkins/source.js';
import { repoadmin, scratch } from './harness.js';

describe('docs/jobs.md: replacing a seed job', () => {
  it('has an example file that jobs validate accepts', async () => {
    const readme = await readFile(new URL('../../docs/jobs.md', import.meta.url), 'utf8');
    const section = readme.split('## Replacing a seed job')[1]?.split('\n## ')[0] ?? '';
    const example = /```json\n([\s\S]*?)```/.exec(section)?.[1];
    expect(example).toBeDefined();
    const files = await scratch();
    try {
      const path = await files.write('jenkins-dsl-jobs.json', example!);
      const run = await repoadmin(['jobs', 'validate', path, '--source', 'docs']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(run.stdout).toContain('valid: 1 pipeline, 1 multibranch jobs, 1 folders, 1 views');
    } finally {
      await files.cleanup();
    }
  });
});

describe('docs/jobs.md: the ownership marker', () => {
  it('shows the marker as the code writes it, and the HTML comment only as what earlier versions wrote', async () => {
    const doc = await readFile(new URL('../../docs/jobs.md', import.meta.url), 'utf8');
    const shown = [...doc.matchAll(/`([^`]*(?:managed by repoadmin|trigger token sha256)[^`]*)`/gi)];
    expect(shown.length).toBeGreaterThanOrEqual(4);
    let sentences = 0;
    for (const { 0: span, 1: text, index } of shown) {
      // The paragraph around the example: an older form may appear only where earlier versions are spoken of.
      const around = doc.slice(Math.max(0, index - 200), index + span.length + 200);
      if (/<!--|-->|sha256:/.test(text!)) {
        expect(around, text).toMatch(/earlier versions/);
      } else if (text!.startsWith('Managed by repoadmin from ')) {
        const marker = markerOf(text)!;
        expect(withMarker('', marker.sourceId, marker.item!), text).toBe(text);
        sentences++;
      } else {
        // A fragment about the trigger token: written as the sentence writes it.
        expect(text).toMatch(/trigger token sha256 [0-9a-f<]/);
        expect(withMarker('', 'source', 'team/app', 'token')).toMatch(/ \(item team\/app; trigger token sha256 [0-9a-f]{16}\): edits made /);
      }
    }
    expect(sentences).toBeGreaterThanOrEqual(2);
  });
});
