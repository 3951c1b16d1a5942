/**
 * The model views' cache (src/domain/studies/model-view-cache.ts) with exact accounting: each value
 * is its own size (a `sizeOf` that returns the number), so an entry costs value + 2·key length + 64
 * bytes and every bound can be hit exactly. What is evicted, in which order, and what is never kept;
 * and approxBytes on every kind of value. test/domain/model-view-cache.test.ts drives the cache
 * through the views and checks its bounds as inequalities.
 */
import { describe, expect, it } from 'vitest';
import { approxBytes, ModelViewCache, type ModelViewCacheBounds } from '../../src/domain/studies/model-view-cache.js';

const roomy: ModelViewCacheBounds = { perTenantEntries: 100, perTenantBytes: 1e9, entries: 1000, bytes: 1e9 };
const cache = (over: Partial<ModelViewCacheBounds> = {}) => new ModelViewCache({ ...roomy, ...over }, (v) => v as number);
/** Keys of one character: an entry of value v costs v + 66 bytes. */
const cost = (v: number) => v + 66;

describe('accounting', () => {
  it('an entry costs its value\'s size, two bytes a key character and 64; setting a key again replaces it', () => {
    const c = cache();
    c.set('t', 'k', 100);
    c.set('t', 'kk', 10);
    expect(c.stats()).toEqual({ entries: 2, bytes: cost(100) + 10 + 4 + 64, inflight: 0, tenants: { t: { entries: 2, bytes: cost(100) + 78 } } });
    c.set('t', 'k', 50);
    expect(c.stats().entries).toBe(2);
    expect(c.stats().bytes).toBe(cost(50) + 78);
    expect(c.get('t', 'k')).toBe(50);
  });

  it('a tenant whose last entry goes is forgotten', () => {
    const c = cache({ perTenantEntries: 1 });
    c.set('t', 'a', 1);
    c.set('u', 'a', 1);
    c.set('u', 'b', 1);
    expect(Object.keys(c.stats().tenants).sort()).toEqual(['t', 'u']);
    // A value too large for any bound removes the key it replaces, and keeps nothing.
    c.set('t', 'a', 1e10);
    expect(c.stats().tenants).toEqual({ u: { entries: 1, bytes: cost(1) } });
  });
});

describe('what is never kept', () => {
  it.each<[string, Partial<ModelViewCacheBounds>]>([
    ['above the tenant\'s bytes', { perTenantBytes: cost(100) - 1 }],
    ['above the whole\'s bytes', { bytes: cost(100) - 1 }],
    ['no entries allowed a tenant', { perTenantEntries: 0 }],
    ['no entries allowed at all', { entries: 0 }],
  ])('%s: not kept, and the tenant\'s other entries stay', (_, over) => {
    const c = cache(over);
    c.set('t', 'a', 0);
    const before = c.stats();
    c.set('t', 'b', 100);
    expect(c.get('t', 'b')).toBeUndefined();
    expect(c.stats()).toEqual(before);
  });

  it('a bound of one entry keeps one', () => {
    const c = cache({ entries: 1, perTenantEntries: 1 });
    c.set('t', 'a', 1);
    expect(c.get('t', 'a')).toBe(1);
  });

  it('exactly at the byte bounds: kept', () => {
    const c = cache({ perTenantBytes: cost(100), bytes: cost(100) });
    c.set('t', 'b', 100);
    expect(c.get('t', 'b')).toBe(100);
  });
});

describe('eviction', () => {
  it('per tenant by count: the least recently used goes, and a read makes an entry recent', () => {
    const c = cache({ perTenantEntries: 2 });
    c.set('t', 'a', 1);
    c.set('t', 'b', 2);
    expect(c.get('t', 'a')).toBe(1);
    c.set('t', 'c', 3);
    expect([c.get('t', 'a'), c.get('t', 'b'), c.get('t', 'c')]).toEqual([1, undefined, 3]);
  });

  it('per tenant by bytes: over the bound the oldest go until it holds; exactly at it nothing does', () => {
    const c = cache({ perTenantBytes: 2 * cost(10) + 1 });
    c.set('t', 'a', 10);
    c.set('t', 'b', 10);
    c.set('t', 'c', 11);
    // 3 entries are over the bound; without a, b and c hold exactly 2·cost(10) + 1.
    expect([c.get('t', 'a'), c.get('t', 'b'), c.get('t', 'c')]).toEqual([undefined, 10, 11]);
    expect(c.stats().tenants.t).toEqual({ entries: 2, bytes: 2 * cost(10) + 1 });
  });

  it('over the whole\'s bytes the tenant holding the most bytes gives up its oldest; exactly at the bound nothing goes', () => {
    const c = cache({ bytes: cost(200) + 2 * cost(10) });
    c.set('small', 'a', 10);
    c.set('big', 'a', 200);
    c.set('small', 'b', 10);
    expect(c.stats().entries).toBe(3);
    c.set('small', 'c', 1);
    // small then holds 2·cost(10) + cost(1) = 219 bytes, big cost(200) = 266: big gives up its only entry.
    expect(c.get('big', 'a')).toBeUndefined();
    expect([c.get('small', 'a'), c.get('small', 'b'), c.get('small', 'c')]).toEqual([10, 10, 1]);
  });

  it('over the whole\'s count the tenant holding the most entries gives up its oldest, even if its entries are newer', () => {
    const c = cache({ entries: 3 });
    c.set('many', 'a', 1);
    c.set('many', 'b', 1);
    c.set('old', 'a', 1);
    // many's entries read after old's was set: its least recently used entry is newer than old's.
    expect([c.get('many', 'a'), c.get('many', 'b')]).toEqual([1, 1]);
    c.set('new', 'a', 1);
    expect(c.get('old', 'a')).toBe(1);
    expect(c.get('many', 'a')).toBeUndefined();
    expect(c.get('many', 'b')).toBe(1);
    expect(c.get('new', 'a')).toBe(1);
  });

  it('between tenants holding as much, the one whose oldest entry was used longest ago (reads count as use)', () => {
    const c = cache({ entries: 2 });
    c.set('t1', 'x', 1);
    c.set('t2', 'y', 1);
    expect(c.get('t1', 'x')).toBe(1);
    c.set('t3', 'z', 1);
    expect([c.get('t1', 'x'), c.get('t2', 'y'), c.get('t3', 'z')]).toEqual([1, undefined, 1]);
  });
});

describe('approxBytes', () => {
  it.each<[string, unknown, number]>([
    ['a number', 1.5, 8],
    ['a boolean', true, 8],
    ['null', null, 8],
    ['undefined', undefined, 8],
    ['a bigint (not an object)', 10n, 8],
    ['a string: 16 and 2 a character', 'abc', 22],
    ['a set: 16 and 16 an element', new Set([1, 2, 3]), 64],
    ['an array: 16, 8 an element, and what its strings and objects hold', [1, 'ab', [1]], 16 + 24 + 20 + 24],
    ['an object: 16, and per property 16, 2 a name character and its value', { ab: 1, c: 'x' }, 16 + (16 + 4 + 8) + (16 + 2 + 18)],
  ])('%s', (_, value, bytes) => {
    expect(approxBytes(value)).toBe(bytes);
  });
});

describe('single flight', () => {
  it('computations of different keys (or tenants) in flight at once are not shared; identical ones are', async () => {
    const c = cache();
    let calls = 0;
    const slow = (v: number) => () => new Promise<number>((resolve) => setTimeout(() => { calls++; resolve(v); }, 5));
    const [a, b, u, again] = await Promise.all([c.getOrCompute('t', 'a', slow(1)), c.getOrCompute('t', 'b', slow(2)), c.getOrCompute('u', 'a', slow(3)), c.getOrCompute('t', 'a', slow(4))]);
    expect([a, b, u, again]).toEqual([1, 2, 3, 1]);
    expect(calls).toBe(3);
    expect(c.stats().inflight).toBe(0);
  });
});
