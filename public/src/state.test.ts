import { describe, expect, it } from 'vitest';
import { defaultState, nextSort, readState, searchRequest, writeState } from './state.js';

const read = (query: string) => readState(new URLSearchParams(query));

describe('the view in the URL', () => {
  it('defaults to the latest versions, 25 a page, newest first', () => {
    expect(read('')).toEqual(defaultState());
    expect(defaultState()).toMatchObject({ latestOnly: true, page: 1, size: 25 });
    expect(defaultState().sortField).toBeUndefined();
    expect(writeState(defaultState()).toString()).toBe('');
  });

  it('reads every filter, paging and sorting back from what it wrote', () => {
    const state = {
      filters: { projectName: 'atlas', branch: 'release/1.x', groupId: 'com.acme.*', artifactId: 'core', version: '1.0', type: 'LIBRARY', uid: 'u' },
      latestOnly: false,
      page: 3,
      size: 50,
      sortField: 'version' as const,
      sortDirection: 'DESC' as const,
    };
    expect(read(writeState(state).toString())).toEqual(state);
  });

  it('never asks for more than 100 records or a page before the first', () => {
    expect(read('size=1000&page=0')).toMatchObject({ size: 100, page: 1 });
    expect(searchRequest(read('size=1000')).query.get('size')).toBe('100');
    expect(read('size=0').size).toBe(1);
    expect(read('size=ten&page=-2')).toMatchObject({ size: 25, page: 1 });
  });

  it('ignores unknown sort fields and reads the direction in any case', () => {
    expect(read('sortField=password&sortDirection=DESC')).toEqual(defaultState());
    expect(read('sortField=creationDate&sortDirection=desc')).toMatchObject({ sortField: 'creationDate', sortDirection: 'DESC' });
  });

  it('turns a view into the body and query of a search, without empty filters', () => {
    const { body, query } = searchRequest(read('projectName=atlas&branch=&page=2&size=10&sortField=version&sortDirection=ASC'));
    expect(body).toEqual({ projectName: 'atlas', latestVersion: true });
    expect(Object.fromEntries(query)).toEqual({ page: '2', size: '10', sortField: 'version', sortDirection: 'ASC' });
    expect(searchRequest(read('latestVersion=false')).body).toEqual({});
  });

  it('sorts a new column ascending (dates newest first) and flips the current one', () => {
    const state = defaultState();
    expect(nextSort(state, 'version')).toEqual({ sortField: 'version', sortDirection: 'ASC' });
    expect(nextSort(state, 'creationDate')).toEqual({ sortField: 'creationDate', sortDirection: 'ASC' });
    expect(nextSort({ ...state, sortField: 'version', sortDirection: 'ASC' }, 'version')).toEqual({ sortField: 'version', sortDirection: 'DESC' });
    expect(nextSort({ ...state, sortField: 'type', sortDirection: 'DESC' }, 'creationDate')).toEqual({ sortField: 'creationDate', sortDirection: 'DESC' });
  });
});
