/**
 * CatCMA's categorical weights (src/engine/strategies/catcma.ts catWeights) against their closed
 * form (Hamano et al., GECCO 2024, as the reference implementation CyberAgentAILab/cmaes writes it):
 * w'_i = ln((λ+1)/2) − ln i for the best μ = ⌊λ/2⌋ points (i = 1 … μ), 0 for the others, normalised to
 * sum 1. For odd λ the (μ+1)-th raw weight is ln((λ+1)/2) − ln(μ+1) = 0 anyway, so only an even λ tells
 * `i < μ` from `i ≤ μ` (the existing test used λ = 7).
 */
import { describe, expect, it } from 'vitest';
import { catWeights } from '../../src/engine/strategies/catcma.js';

/** The closed form, written out (1-based i as in the paper). */
function reference(lambda: number): number[] {
  const mu = Math.floor(lambda / 2);
  const raw = Array.from({ length: lambda }, (_, k) => (k + 1 <= mu ? Math.log((lambda + 1) / 2) - Math.log(k + 1) : 0));
  const sum = raw.reduce((a, b) => a + b, 0);
  return raw.map((v) => v / sum);
}

describe('catWeights', () => {
  it('λ = 6: the best three get ln 3.5, ln 1.75, ln(7/6) normalised (0.6370, 0.2846, 0.0784), the other three exactly 0', () => {
    const w = catWeights(6);
    // ln 3.5 = 1.252763, ln 1.75 = 0.559616, ln(7/6) = 0.154151; sum 1.966530.
    expect(w[0]).toBeCloseTo(1.252763 / 1.96653, 5);
    expect(w[1]).toBeCloseTo(0.559616 / 1.96653, 5);
    expect(w[2]).toBeCloseTo(0.154151 / 1.96653, 5);
    expect(w.slice(3)).toEqual([0, 0, 0]);
  });

  it.each([2, 3, 4, 6, 7, 8, 10, 15, 16, 100])('λ = %i matches the closed form, no weight is negative, and they sum to 1', (lambda) => {
    const w = catWeights(lambda);
    const ref = reference(lambda);
    expect(w).toHaveLength(lambda);
    w.forEach((v, i) => expect(v, `w[${i}]`).toBeCloseTo(ref[i]!, 14));
    expect(w.every((v) => v >= 0)).toBe(true);
    expect(w.filter((v) => v > 0)).toHaveLength(Math.floor(lambda / 2));
    expect(w.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
  });
});
