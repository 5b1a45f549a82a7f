import { describe, expect, it } from 'vitest';
import { fakeDeps } from '../../test/cli/fakes.js';
import { confirmed, valueOrAsk } from './support.js';

describe('what is asked, and why not', () => {
  const ask = { value: undefined, question: 'Project?', supply: '--project' };

  it('off a terminal: a usage error naming what supplies the value', async () => {
    await expect(valueOrAsk(fakeDeps(), ask)).rejects.toMatchObject({ code: 'usage', message: 'missing --project (no terminal to ask on)' });
    await expect(confirmed(fakeDeps(), false, 'Delete?')).rejects.toMatchObject({
      code: 'usage',
      message: 'this cannot be undone: pass --yes to confirm (no terminal to ask on)',
    });
  });

  it('on a terminal with CI set: says that CI is why nothing is asked', async () => {
    const deps = fakeDeps({ tty: true, env: { CI: 'true' } });
    await expect(valueOrAsk(deps, ask)).rejects.toMatchObject({ code: 'usage', message: 'missing --project (CI is set, so nothing is asked)' });
    await expect(confirmed(deps, false, 'Delete?')).rejects.toMatchObject({ message: 'this cannot be undone: pass --yes to confirm (CI is set, so nothing is asked)' });
  });
});
