import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliInvocation } from './invocation.js';

describe('cliInvocation: how the first-start hint names the command line', () => {
  const checkout = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-checkout-'));
  const launcher = path.join(checkout, 'bin', 'repoadmin');
  fs.mkdirSync(path.dirname(launcher));
  fs.writeFileSync(launcher, '#!/usr/bin/env node\n');
  const plainPath = ['/usr/bin', '/bin'].join(path.delimiter);

  it('is `repoadmin` when that name on PATH leads to this launcher (npm link, a global install)', () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-bin-'));
    fs.symlinkSync(launcher, path.join(bin, 'repoadmin'));
    expect(cliInvocation({ PATH: `${plainPath}${path.delimiter}${bin}` }, launcher, checkout)).toBe('repoadmin');
    expect(cliInvocation({ PATH: bin, npm_command: 'start' }, launcher, checkout)).toBe('repoadmin');
  });

  it('is `npx repoadmin` when started through npm (npm start, npx) and the name is not on PATH', () => {
    expect(cliInvocation({ PATH: plainPath, npm_command: 'start' }, launcher, checkout)).toBe('npx repoadmin');
    expect(cliInvocation({ PATH: plainPath, npm_command: 'exec' }, launcher, checkout)).toBe('npx repoadmin');
  });

  it('is `npx repoadmin` under npx, whose own PATH folders lead to this launcher only while it runs', () => {
    for (const npmBin of ['node_modules/.bin', '.npm/_npx/0a1b2c/node_modules/.bin']) {
      const bin = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-npx-')), npmBin);
      fs.mkdirSync(bin, { recursive: true });
      fs.symlinkSync(launcher, path.join(bin, 'repoadmin'));
      expect(cliInvocation({ PATH: `${bin}${path.delimiter}${plainPath}`, npm_command: 'exec' }, launcher, checkout), npmBin).toBe('npx repoadmin');
      // Put there by the user, not by npm: it counts.
      expect(cliInvocation({ PATH: `${bin}${path.delimiter}${plainPath}` }, launcher, checkout), npmBin).toBe('repoadmin');
    }
  });

  it('ignores a `repoadmin` on PATH that is another installation', () => {
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'repoadmin-other-'));
    fs.writeFileSync(path.join(other, 'repoadmin'), '#!/bin/sh\n');
    expect(cliInvocation({ PATH: other, npm_command: 'start' }, launcher, checkout)).toBe('npx repoadmin');
    expect(cliInvocation({ PATH: other }, launcher, checkout)).toBe('node bin/repoadmin');
  });

  it('is `node` and the launcher, relative when started from above it, else absolute', () => {
    expect(cliInvocation({ PATH: plainPath }, launcher, checkout)).toBe('node bin/repoadmin');
    expect(cliInvocation({}, launcher, os.tmpdir() + '/elsewhere')).toBe(`node ${launcher}`);
  });
});
