/**
 * StudyCache.extendCompleted (src/domain/loop/study-cache.ts) appends what a commit completed only
 * to the list the commit was computed from: when the entry holds another number of completed trials
 * than the request loaded (another writer's commit was read in between, or the entry was replaced),
 * appending would leave a list that is neither storage's nor the request's, and its keys would
 * miss or invent configurations for no-repeat.ts. The entry is then dropped, to be read again.
 * Removing that guard passed every test under mutation testing.
 */
import { describe, expect, it } from 'vitest';
import { StudyCache } from '../../src/domain/loop/study-cache.js';
import { of, point, space } from '../helpers/cached-points.js';

describe('StudyCache.extendCompleted', () => {
  it('extends the list (and its keys) when the commit was computed from the cached list', () => {
    const c = new StudyCache();
    c.setCompleted('s', [point(1, 10), point(2, 20)]);
    const keys = c.completedKeys('s', c.completed('s', 2)!, space, of)!;
    c.extendCompleted('s', 2, [point(3, 30)]);
    const list = c.completed('s', 3);
    expect(list?.map((p) => p.trialId)).toEqual([1, 2, 3]);
    expect([...c.completedKeys('s', list!, space, of)!]).toEqual(['[10]', '[20]', '[30]']);
    // Extended in place: built once.
    expect(keys.has('[30]')).toBe(true);
    expect(c.keyBuilds).toBe(1);
  });

  it('drops the list and its keys when the commit was computed from another number of completed trials', () => {
    const c = new StudyCache();
    c.setCompleted('s', [point(1, 10), point(2, 20), point(3, 30)]);
    const cached = c.completed('s', 3)!;
    c.completedKeys('s', cached, space, of);
    // A request loaded 2 completed trials (before a third was read into the entry) and completed trial 4.
    c.extendCompleted('s', 2, [point(4, 40)]);
    for (const n of [2, 3, 4]) expect(c.completed('s', n), `${n} completed`).toBeNull();
    // The old list's keys are not served any more either.
    expect(c.completedKeys('s', cached, space, of)).toBeNull();
    // Read again from storage, it is cached afresh.
    const fresh = [point(1, 10), point(2, 20), point(3, 30), point(4, 40)];
    c.setCompleted('s', fresh);
    expect(c.completed('s', 4)).toBe(fresh);
  });

  it('drops the list also when the commit completed nothing', () => {
    const c = new StudyCache();
    c.setCompleted('s', [point(1, 10), point(2, 20)]);
    c.extendCompleted('s', 1, []);
    expect(c.completed('s', 2)).toBeNull();
  });

  it('does nothing for a study without a cached list', () => {
    const c = new StudyCache();
    c.extendCompleted('s', 0, [point(1, 10)]);
    expect(c.completed('s', 1)).toBeNull();
    expect(c.completed('s', 0)).toBeNull();
  });
});
