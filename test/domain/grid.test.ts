/**
 * grid.ts: grid values in decimal (no float noise), the last index, snapping, and how far a
 * reported value may be from a grid value. The oracle for "exact decimal" is an integer ratio:
 * (a + k·b)/1000 is the double nearest the decimal low + k·step for low = a/1000, step = b/1000.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Grid, gridOf, stepOf } from '../../src/domain/studies/grid.js';

describe('Grid', () => {
  it('computes low + k·step in decimal', () => {
    const g = new Grid(0, 1, 0.1);
    expect([g.value(3), g.value(7), g.last, g.high]).toEqual([0.3, 0.7, 10, 1]);
    expect(new Grid(-0.5, 0.5, 0.1).value(2)).toBe(-0.3);
    expect(new Grid(1e-7, 1e-6, 1e-7).value(2)).toBe(3e-7);
    expect(new Grid(1e21, 2e21, 1e20).value(5)).toBe(1.5e21);
  });

  it('agrees with the integer-ratio oracle for any low, step and k with three decimals', () => {
    fc.assert(
      fc.property(fc.integer({ min: -100_000, max: 100_000 }), fc.integer({ min: 1, max: 5_000 }), fc.integer({ min: 1, max: 400 }), (a, b, n) => {
        const g = new Grid(a / 1000, (a + n * b) / 1000 + b / 2000, b / 1000);
        expect(g.last).toBe(n);
        for (const k of [0, 1, n >> 1, n]) expect(g.value(k)).toBe((a + k * b) / 1000);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('rounds the high down to the last grid value, not to the nearest one', () => {
    const g = new Grid(0, 1.15, 0.4);
    expect([g.last, g.high]).toEqual([2, 0.8]);
    expect(new Grid(0, 1, 0.1).high).toBe(1); // 1/0.1 is 9.999999999999998 in binary
  });

  it('takes a high below a grid value by float noise as that value (a high computed as low + K·step in binary)', () => {
    const binaryHigh = 3 * 0.3;
    expect(binaryHigh).toBe(0.8999999999999999);
    expect(new Grid(0, binaryHigh, 0.3).high).toBe(0.9);
    expect(new Grid(0, 0.9 - 1e-6, 0.3).high).toBe(0.6);
  });

  it('snaps to the nearest grid value within the bounds', () => {
    const g = new Grid(0, 1, 0.1);
    expect([g.nearest(-5), g.nearest(2), g.nearest(0.349), g.nearest(0.351), g.nearest(0.04)]).toEqual([0, 1, 0.3, 0.4, 0]);
  });

  it('takes float noise as the grid value, nothing further', () => {
    const g = new Grid(0, 1, 0.1);
    expect(g.indexOf(0.1 * 3)).toBe(3);
    expect(g.indexOf(0.3 + 1e-11)).toBe(3);
    expect(g.indexOf(0.3 + 1e-6)).toBeNull();
    expect(g.indexOf(0.35)).toBeNull();
    expect(g.indexOf(1.1)).toBeNull();
    expect(g.neighbours(0.35)).toEqual([0.3, 0.4]);
  });
});

describe('the tolerance and the ends of the grid', () => {
  it('float noise is relative to the step (1e-9 of it) plus 16 ulps of the larger bound, nothing more', () => {
    // Step 0.1: 1e-9·0.1 = 1e-10 (not 1e-9 / 0.1 = 1e-8); 5e-9 away is off the grid.
    expect(new Grid(0, 1, 0.1).indexOf(0.3 + 5e-9)).toBeNull();
    // Bounds [0, 1e6], step 1: 1e-9 + 2⁻⁴⁸·1e6 ≈ 4.6e-9 (the larger bound's ulps, not the smaller's 0).
    expect(new Grid(0, 1e6, 1).indexOf(500 + 3e-9)).toBe(500);
    expect(new Grid(0, 1e6, 1).indexOf(500 + 6e-9)).toBeNull();
  });

  it('below the first grid value or above the last is off the grid, however close to low − step', () => {
    const g = new Grid(0, 1, 0.1);
    expect(g.indexOf(-0.1)).toBeNull();
    expect(g.indexOf(1.1)).toBeNull();
    expect(g.indexOf(0)).toBe(0);
    expect(g.indexOf(1)).toBe(10);
  });

  it('the nearest grid value to ±∞ and NaN: an end of the grid, never NaN', () => {
    const g = new Grid(-1, 1, 0.5);
    expect([g.nearest(Infinity), g.nearest(-Infinity), g.nearest(Number.NaN)]).toEqual([1, -1, -1]);
  });
});

describe('bounds at the extremes of a double', () => {
  it('finds grid values where high − low overflows', () => {
    const g = new Grid(-1e308, 1e308, 1e300);
    expect(g.last).toBe(2e8);
    expect([g.indexOf(1e308), g.indexOf(-1e308), g.nearest(1e308), g.nearest(-1e308)]).toEqual([2e8, 0, 1e308, -1e308]);
    expect(g.value(1e8 + 3)).toBe(3e300);
  });
});

describe('stepOf and gridOf', () => {
  it('an int steps by 1 unless told, a float is continuous; only other grids need a Grid', () => {
    expect(stepOf({ type: 'int' })).toBe(1);
    expect(stepOf({ type: 'float' })).toBeNull();
    expect(gridOf({ type: 'int', bounds: [0, 9], step: 1 })).toBeNull();
    expect(gridOf({ type: 'float', bounds: [0, 9] })).toBeNull();
    expect(gridOf({ type: 'int', bounds: [0, 9], step: 3 })?.last).toBe(3);
    // A float's step of 1 is a grid (only an int's 1 is the plain integers).
    expect(gridOf({ type: 'float', bounds: [0, 9], step: 1 })?.last).toBe(9);
    expect(gridOf({ type: 'float', bounds: null, step: 1 })).toBeNull();
  });
});
