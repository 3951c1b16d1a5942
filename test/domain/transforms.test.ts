import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NumericParameterSpec } from '../../src/domain/studies/study-spec.js';
import { initSpec } from '../../src/domain/studies/engine-ops.js';
import { resolveOptions } from '../../src/engine/index.js';
import { internalBox, legalize, materialize, searchSpace, toInternal, toUserRaw } from '../../src/domain/studies/transforms.js';

/** A random parameter with bounds and a prior inside them (log-scaled ones have positive bounds). */
const parameterArb = fc
  .record({
    type: fc.constantFrom<'float' | 'int'>('float', 'int'),
    scale: fc.constantFrom<'linear' | 'log'>('linear', 'log'),
    lo: fc.integer({ min: -1000, max: 1000 }),
    width: fc.integer({ min: 1, max: 1000 }),
    frac: fc.double({ min: 0, max: 1, noNaN: true }),
    std: fc.double({ min: 0.01, max: 10, noNaN: true }),
    bounded: fc.boolean(),
  })
  .map(({ type, scale, lo, width, frac, std, bounded }, ): NumericParameterSpec => {
    const low = scale === 'log' ? Math.abs(lo) + 1 : lo;
    const high = low + width;
    const t = (x: number) => (scale === 'log' ? Math.log(x) : x);
    const mean = t(low) + frac * (t(high) - t(low));
    return { name: 'p', type, scale, bounds: bounded || scale === 'log' || type === 'int' ? [low, high] : null, step: type === 'int' ? 1 : null, prior: { mean, std } };
  });

const spaceArb = fc.array(parameterArb, { minLength: 1, maxLength: 6 }).chain((params) =>
  fc
    .array(fc.double({ min: -0.9, max: 0.9, noNaN: true }), { minLength: params.length * params.length, maxLength: params.length * params.length })
    .map((rho) => {
      const d = params.length;
      // A valid correlated covariance: C = D (I + small symmetric off-diagonals, diagonally dominant) D.
      const cov = params.map((p, i) =>
        params.map((q, j) => (i === j ? p.prior.std ** 2 : (rho[i * d + j]! + rho[j * d + i]!) / (2 * d) * p.prior.std * q.prior.std)),
      );
      const named = params.map((p, i) => ({ ...p, name: `x${i}` }));
      return searchSpace(named, { mean: params.map((p) => p.prior.mean), covariance: cov, std: params.map((p) => p.prior.std) });
    }),
);

const pointArb = (d: number) => fc.array(fc.double({ min: -50, max: 50, noNaN: true }), { minLength: d, maxLength: d });

describe('parameter transforms (property tests)', () => {
  it('round trips: toInternal(toUserRaw(u)) = u for points whose user value is representable', () => {
    fc.assert(
      fc.property(spaceArb.chain((s) => fc.tuple(fc.constant(s), pointArb(s.parameters.length).map((u) => u.map((v) => v / 10)))), ([space, u]) => {
        const x = toUserRaw(space, u);
        if (x.some((v) => !Number.isFinite(v) || v === 0)) return; // exp overflow/underflow: no round trip possible
        const back = toInternal(space, x);
        back.forEach((v, i) => expect(v).toBeCloseTo(u[i]!, 6));
      }),
      { numRuns: 300 },
    );
  });

  it('handed-out points respect bounds, integers are integral, and the engine sees exactly that point', () => {
    fc.assert(
      fc.property(spaceArb.chain((s) => fc.tuple(fc.constant(s), pointArb(s.parameters.length))), ([space, u]) => {
        const { parameters, point } = materialize(space, u);
        space.numeric.forEach((p) => {
          const v = parameters[p.name] as number;
          expect(Number.isFinite(v)).toBe(true);
          if (p.bounds) {
            expect(v).toBeGreaterThanOrEqual(p.bounds[0]);
            expect(v).toBeLessThanOrEqual(p.bounds[1]);
          }
          if (p.type === 'int') expect(Number.isInteger(v)).toBe(true);
          expect(point.every(Number.isFinite)).toBe(true);
        });
        // Materialising the learned point again hands out the same values (idempotent).
        const again = materialize(space, point);
        space.parameters.forEach((p) => expect(again.parameters[p.name]).toBeCloseTo(parameters[p.name] as number, 8));
      }),
      { numRuns: 500 },
    );
  });

  it('maps the prior mean to the origin and one prior std to one unit (diagonal prior)', () => {
    const space = searchSpace(
      [
        { name: 'lr', type: 'float', scale: 'log', bounds: [1e-5, 1], step: null, prior: { mean: Math.log(1e-3), std: 2 } },
        { name: 'w', type: 'float', scale: 'linear', bounds: null, step: null, prior: { mean: 5, std: 0.5 } },
      ],
      { mean: [Math.log(1e-3), 5], covariance: [[4, 0], [0, 0.25]], std: [2, 0.5] },
    );
    expect(toInternal(space, [1e-3, 5]).map((v) => Math.abs(v))).toEqual([0, 0]);
    const u = toInternal(space, [1e-3 * Math.exp(2), 5.5]);
    expect(u[0]).toBeCloseTo(1, 12);
    expect(u[1]).toBeCloseTo(1, 12);
    const box = internalBox(space, 3)!;
    expect(box.lower[0]).toBeCloseTo((Math.log(1e-5) - Math.log(1e-3)) / 2, 12);
    expect(box.upper[0]).toBeCloseTo((0 - Math.log(1e-3)) / 2, 12);
    expect([box.lower[1], box.upper[1]]).toEqual([-3, 3]);
    // What the engine gets (initSpec): BO its box_std on the unbounded side, ProbNES no bound there
    // (it keeps μ inside the bounds only), CMA-ES no box at all.
    const bo = initSpec('bo', 2, resolveOptions('bo', 2), space, null).box!;
    expect([bo.lower[1], bo.upper[1]]).toEqual([-3, 3]);
    const probnes = initSpec('prob-cmaes', 2, resolveOptions('prob-cmaes', 2), space, null).box!;
    expect(probnes.lower[0]).toBe(box.lower[0]);
    expect(probnes.upper[0]).toBe(box.upper[0]);
    expect([probnes.lower[1], probnes.upper[1]]).toEqual([-Infinity, Infinity]);
    expect(initSpec('cmaes', 2, resolveOptions('cmaes', 2), space, null).box).toBeNull();
  });

  it('hands the engine the declared reference point as it minimises: a maximised objective\'s negated', () => {
    const space = searchSpace(
      [{ name: 'x', type: 'float', scale: 'linear', bounds: [0, 1], step: null, prior: { mean: 0.5, std: 0.25 } }],
      { mean: [0.5], covariance: [[0.0625]], std: [0.25] },
    );
    const objectives = [{ name: 'accuracy', direction: 'maximize' as const }, { name: 'latency', direction: 'minimize' as const }];
    const spec = (referencePoint: number[] | null) => initSpec('prob-cmaes', 3, resolveOptions('prob-cmaes', 1), space, null, { objectives, constraints: [], referencePoint });
    expect(spec([0.5, 30]).outcomes).toEqual({ objectives: 2, constraints: 0, reference: [-0.5, 30] });
    // None declared: the engine normalises by the front alone.
    expect(spec(null).outcomes).toEqual({ objectives: 2, constraints: 0 });
  });

  it('legalize clamps non-finite values into the bounds', () => {
    const space = searchSpace(
      [{ name: 'n', type: 'int', scale: 'log', bounds: [16, 1024], step: 1, prior: { mean: 4.85, std: 0.5 } }],
      { mean: [4.85], covariance: [[0.25]], std: [0.5] },
    );
    expect(legalize(space, [Infinity])).toEqual([1024]);
    expect(legalize(space, [0])).toEqual([16]);
    expect(legalize(space, [100.4])).toEqual([100]);
  });
});
