/**
 * The loop's per-study cache of search spaces (src/domain/loop/study-cache.ts): built once per study,
 * rebuilt for a study that reappears under the same id with another creation time, dropped with
 * the study's entry.
 */
import { describe, expect, it } from 'vitest';
import { StudyCache } from '../../src/domain/loop/study-cache.js';
import type { SearchSpace } from '../../src/domain/studies/transforms.js';

const space = (tag: string) => ({ tag }) as unknown as SearchSpace;

describe('StudyCache.space', () => {
  it('builds once per study and creation time', () => {
    const cache = new StudyCache();
    let builds = 0;
    const build = (tag: string) => () => (builds++, space(tag));
    const a = cache.space('s1', '2025-01-01T00:00:00.000Z', build('a'));
    expect(cache.space('s1', '2025-01-01T00:00:00.000Z', build('other'))).toBe(a);
    expect(builds).toBe(1);
    // Same id, another study (created later): its own space.
    expect(cache.space('s1', '2025-02-01T00:00:00.000Z', build('b'))).toEqual(space('b'));
    expect(builds).toBe(2);
    cache.forget('s1');
    expect(cache.space('s1', '2025-02-01T00:00:00.000Z', build('c'))).toEqual(space('c'));
    expect(builds).toBe(3);
  });

  it('is bounded with the rest of the entry: the least recently used study is forgotten', () => {
    const cache = new StudyCache(2);
    let builds = 0;
    const build = () => (builds++, space('x'));
    cache.space('s1', 't', build);
    cache.space('s2', 't', build);
    cache.space('s3', 't', build);
    cache.space('s1', 't', build);
    expect(builds).toBe(4);
    cache.space('s3', 't', build);
    expect(builds).toBe(4);
  });
});
