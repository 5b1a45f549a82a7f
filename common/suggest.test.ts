import { describe, expect, it } from 'vitest';
import { closest, editDistance } from './suggest.js';

describe('closest', () => {
  it('counts a swap of neighbours as one step', () => {
    expect(editDistance('prot', 'port')).toBe(1);
    expect(editDistance('port', 'port')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });

  it('suggests the nearest known word for a typo, and nothing for a stranger', () => {
    const known = ['port', 'repoadmin_db_host', 'repoadmin_db_port', 'repoadmin_log_level'];
    expect(closest('prot', known)).toBe('port');
    expect(closest('repoadmin_db_hots', known)).toBe('repoadmin_db_host');
    expect(closest('REPOADMIN_LOG_LEVEL', known)).toBe('repoadmin_log_level');
    expect(closest('colour', known)).toBeUndefined();
    expect(closest('x', known)).toBeUndefined();
  });
});
