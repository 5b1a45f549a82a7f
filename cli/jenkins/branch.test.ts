import { describe, expect, it } from 'vitest';
import { branchSpec, lightweightCheckout } from './branch.js';

describe('branch specs', () => {
  it.each([
    [undefined, '**'],
    ['main', '*/main'],
    ['release/1.x', '*/release/1.x'],
    ['refs/heads/main', 'refs/heads/main'],
    ['refs/tags/v1', 'refs/tags/v1'],
    ['origin/main', 'origin/main'],
    ['remotes/origin/main', 'remotes/origin/main'],
    ['*/main', '*/main'],
    ['**', '**'],
    [':^release-.*', ':^release-.*'],
    ['${BRANCH}', '${BRANCH}'],
  ])('writes %s as %s', (name, spec) => expect(branchSpec(name)).toBe(spec));

  it.each([
    ['*/main', true],
    ['*/release/1.x', true],
    ['refs/heads/main', true],
    ['refs/tags/v1.0', true],
    ['**', false],
    ['*', false],
    ['*/feature-*', false],
    ['refs/heads/release-*', false],
    ['origin/main', false],
    [':^main$', false],
    ['${BRANCH}', false],
    ['*/${BRANCH}', false],
  ])('reads the Jenkinsfile of %s lightly: %s', (spec, light) => {
    expect(lightweightCheckout(spec, false)).toBe(light);
    expect(lightweightCheckout(spec, true)).toBe(false);
  });
});
