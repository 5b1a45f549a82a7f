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
    // eslint-disable-next-line no-control-regex -- strips terminal escape sequences, on purpose
    expect(out.replaceAll(/\u001b\[[0-9;]*m/g, '').split('\n')[0]).toMatch(/^NAME\s+ROLE$/);
  });

  it('NO_COLOR and --no-color give the same table without colour', async () => {
    for (const deps of [fakeDeps({ tty: true, env: { NO_COLOR: '1' } }), fakeDeps({ tty: true, settings: { color: false } })]) {
      await printReport({ json: {}, table }, deps);
      expect(deps.io.stdoutText()).not.toContain(ESC);
      expect(deps.io.stdoutText()).toMatch(/^NAME\s+ROLE\nadmin\s+ROLE_ADMIN\n/);
    }
  });

  it('shows control characters from the server as U+FFFD everywhere but in --json', async () => {
    const hostile = { head: ['BRANCH', 'DESCRIPTION'], rows: [['ma\u001b[2Jin', 'x\u001b]0;pwned\u0007y\u009b31m']] };
    const line = { text: 'v\u001b[31m1', tone: 'strong' as const };
    for (const deps of [fakeDeps({ tty: true, settings: { color: false } }), fakeDeps({ tty: true }), fakeDeps()]) {
      await printReport({ json: hostile.rows, table: hostile, lines: [line, 'a\rb'], notes: ['n\u001bo'], warnings: ['w\u0000'] }, deps);
      // eslint-disable-next-line no-control-regex -- strips terminal escape sequences, on purpose
      const shown = `${deps.io.stdoutText()}${deps.io.stderrText()}`.replaceAll(/\u001b\[(1|22|31|39|36|1;36)?m/g, '');
      // eslint-disable-next-line no-control-regex -- looks for control characters, on purpose
      expect(shown).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
      expect(shown).toContain('ma\ufffd[2Jin');
      expect(shown).toContain('x\ufffd]0;pwned\ufffdy\ufffd31m');
    }
    const json = fakeDeps({ settings: { json: true } });
    await printReport({ json: hostile.rows, table: hostile }, json);
    expect(JSON.parse(json.io.stdoutText())).toEqual(hostile.rows);
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
