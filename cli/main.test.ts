import { describe, expect, it } from 'vitest';
import { AppError } from '../common/errors.js';
import { fakeApi, fakeDeps } from '../test/cli/fakes.js';
import { main } from './main.js';

describe('main', () => {
  it("prints a validation error once, not its fields a second time", async () => {
    const errors = [
      { path: 'repositoryUrl', message: 'must be an http(s), ssh or scp-style git address' },
      { path: 'type', message: 'at most 255 characters' },
    ];
    const api = fakeApi({
      publish: async () => {
        throw new AppError('validation', errors.map((e) => `${e.path}: ${e.message}`).join('; '), { errors });
      },
    });
    const deps = fakeDeps({ api });
    const code = await main(['node', 'repoadmin', 'publish', '--group', 'g', '--artifact', 'a', '--version', '1', '--branch', 'b', '--project', 'p'], deps);
    expect(code).toBe(1);
    expect(deps.io.stderrText()).toBe('error: repositoryUrl: must be an http(s), ssh or scp-style git address; type: at most 255 characters\n');
  });

  it('lists field errors the message does not already name', async () => {
    const api = fakeApi({
      publish: async () => {
        throw new AppError('validation', 'the record is not valid', { errors: [{ path: 'type', message: 'at most 255 characters' }] });
      },
    });
    const deps = fakeDeps({ api });
    await main(['node', 'repoadmin', 'publish', '--group', 'g', '--artifact', 'a', '--version', '1', '--branch', 'b', '--project', 'p'], deps);
    expect(deps.io.stderrText()).toBe('error: the record is not valid\n  type: at most 255 characters\n');
  });

  it("names the server's field errors by the flags that set them", async () => {
    const errors = [{ path: 'artifact.version', message: 'at most 50 characters' }];
    const api = fakeApi({
      publish: async () => {
        throw new AppError('validation', 'artifact.version: at most 50 characters', { errors });
      },
    });
    const deps = fakeDeps({ api });
    const code = await main(['node', 'repoadmin', 'publish', '--group', 'g', '--artifact', 'a', '--version', '1'.repeat(60), '--branch', 'b', '--project', 'p'], deps);
    expect(code).toBe(1);
    expect(deps.io.stderrText()).toBe('error: --version: at most 50 characters\n');
  });

  it('an unknown --flag=value is named without its value, which may be a password', async () => {
    const deps = fakeDeps();
    const code = await main(['node', 'repoadmin', 'login', '--password=hunter2-secret'], deps);
    expect(code).toBe(2);
    expect(deps.io.stderrText()).toContain("unknown option '--password'");
    expect(deps.io.stderrText()).not.toContain('hunter2');
  });
});
