import { describe, expect, it } from 'vitest';
import { fakeDeps } from '../../test/cli/fakes.js';
import { printReport, renderTable, tsv, useColor } from './index.js';

const table = { head: ['NAME', 'ROLE'], rows: [['admin', 'ROLE_ADMIN'], ['ci\tshop', null]] };
const ESC = '\u001b[';

describe('output', () => {
  it('piped: the rows as tab-separated text, no header, no colour', async () => {
    const deps = fakeDeps({ env: { FORCE_COLOR: '1' } });
    await printReport({ json: {}, table, notes: ['done'] }, deps);
    expect(deps.io.stdoutText()).toBe('admin\tROLE_ADMIN\nci shop\t\n');
    expect(deps.io.stderrText()).toBe('done\n');
  });

  it('on a terminal: a table with a coloured header', async () => {
    const deps = fakeDeps({ tty: true });
    await printReport({ json: {}, table }, deps);
    const out = deps.io.stdoutText();
    expect(out).toContain(`${ESC}1m`);
    expect(out.replaceAll(/\u001b\[[0-9;]*m/g, '').split('\n')[0]).toMatch(/^NAME\s+ROLE$/);
  });

  it('NO_COLOR and --no-color give the same table without colour', async () => {
    for (const deps of [fakeDeps({ tty: true, env: { NO_COLOR: '1' } }), fakeDeps({ tty: true, settings: { color: false } })]) {
      await printReport({ json: {}, table }, deps);
      expect(deps.io.stdoutText()).not.toContain(ESC);
      expect(deps.io.stdoutText()).toMatch(/^NAME\s+ROLE\nadmin\s+ROLE_ADMIN\n/);
    }
  });

  it('--json prints the JSON only, --quiet silences notes', async () => {
    const deps = fakeDeps({ settings: { json: true, quiet: true } });
    await printReport({ json: { a: 1 }, table, lines: ['x'], notes: ['note'] }, deps);
    expect(JSON.parse(deps.io.stdoutText())).toEqual({ a: 1 });
    expect(deps.io.stderrText()).toBe('');
  });

  it('colour: --no-color, then FORCE_COLOR, then NO_COLOR, then the terminal', () => {
    expect(useColor({ FORCE_COLOR: '1' }, { color: false }, true)).toBe(false);
    expect(useColor({ FORCE_COLOR: '1', NO_COLOR: '1' }, {}, false)).toBe(true);
    expect(useColor({ FORCE_COLOR: '0' }, {}, true)).toBe(false);
    expect(useColor({ NO_COLOR: '1' }, {}, true)).toBe(false);
    expect(useColor({}, {}, true)).toBe(true);
    expect(useColor({}, {}, false)).toBe(false);
  });

  it('tsv and renderTable agree on the rows', async () => {
    expect(tsv([[1, true, undefined]])).toEqual(['1\ttrue\t']);
    expect(await renderTable({ head: [], rows: [['user', 'admin']] }, false)).toBe('user  admin');
  });

  it('lines with a tone: coloured on a terminal, plain when piped or without colour', async () => {
    const lines = ['as is', { text: '+ added', tone: 'added' as const }];
    const terminal = fakeDeps({ tty: true });
    await printReport({ json: {}, lines }, terminal);
    expect(terminal.io.stdoutText()).toBe(`as is\n${ESC}32m+ added${ESC}39m\n`);
    for (const deps of [fakeDeps({ env: { FORCE_COLOR: '1' } }), fakeDeps({ tty: true, settings: { color: false } })]) {
      await printReport({ json: {}, lines }, deps);
      expect(deps.io.stdoutText()).toBe('as is\n+ added\n');
    }
  });

  it('a table on a terminal, its plain lines when piped, then the lines', async () => {
    const report = { json: {}, table, plain: ['created admin'], lines: ['summary'] };
    const piped = fakeDeps();
    await printReport(report, piped);
    expect(piped.io.stdoutText()).toBe('created admin\nsummary\n');
    const terminal = fakeDeps({ tty: true, settings: { color: false } });
    await printReport(report, terminal);
    expect(terminal.io.stdoutText()).toMatch(/^NAME\s+ROLE\n[\s\S]*\nsummary\n$/);
  });
});
