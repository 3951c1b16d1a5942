/**
 * Engine-level pins of the failures the API robustness tests (test/robustness/) found, each
 * reproduced without the server: the engine is driven the way the domain drives it, points handed
 * out after projection onto a box (in internal coordinates, where a diagonal prior makes the
 * bounds a box) and told back as the projected points.
 */
import { describe, expect, it } from 'vitest';
import { fromRows, getStrategy, resolveOptions, Rng, tryCholesky, type BaseState, type Observation } from '../../src/engine/index.js';
import { symEig } from '../../src/engine/linalg/index.js';
import { xnes, type XnesState } from '../../src/engine/strategies/xnes.js';

/** λ_min / λ_max of a symmetric matrix. */
function inverseCondition(cov: number[][]): number {
  const { values } = symEig(fromRows(cov));
  return values[0] / values[values.length - 1];
}

function expectValidCov(cov: number[][], where: string): void {
  expect(cov.every((r) => r.every(Number.isFinite)), where).toBe(true);
  expect(tryCholesky(fromRows(cov)), `${where}: ${JSON.stringify(cov)}`).not.toBeNull();
}

/**
 * The generation loop of the domain with projection onto [lo, hi]^d: ask λ points, clamp them,
 * tell the clamped points with f of the clamped points. Returns every state after a tell.
 */
function runProjected(method: 'xnes', f: (x: number[]) => number, lo: number, hi: number, generations: number, seed: number): BaseState[] {
  const s = getStrategy(method);
  const d = 2;
  let st = s.init({ dim: d, batchSize: 3, options: resolveOptions(method, d) }, Rng.fromSeed(seed));
  const history: Observation[] = [];
  const states: BaseState[] = [];
  for (let g = 0; g < generations; g++) {
    const asked = s.ask(st, { history, pending: [] }, 3);
    st = asked.state;
    const batch = asked.points.map((u) => {
      const x = u.map((v) => Math.min(Math.max(v, lo), hi));
      return { x, y: f(x) };
    });
    history.push(...batch);
    st = s.tell(st, { batch, history });
    states.push(st);
  }
  return states;
}

describe('xnes: injected (projected) points', () => {
  const init = () => xnes.init({ dim: 2, batchSize: 3, options: resolveOptions('xnes', 2) }, Rng.fromSeed(1));
  // Hansen 2011 (arXiv:1110.4181): an injected point's Mahalanobis length is clipped to √d + 2d/(d+2).
  const cz = Math.sqrt(2) + (2 * 2) / (2 + 2);

  it('clips the Mahalanobis length of a point that was not asked to √d + 2d/(d+2)', () => {
    // At the initial state μ = 0, A = I, so z = x: a point at 1e6 and one at exactly c_z on the
    // same ray must give the same update once the first is clipped.
    const far = xnes.tell(init(), { batch: [{ x: [1e6, 0], y: 0 }, { x: [0, 1], y: 1 }, { x: [0, -1], y: 2 }], history: [] });
    const clipped = xnes.tell(init(), { batch: [{ x: [cz, 0], y: 0 }, { x: [0, 1], y: 1 }, { x: [0, -1], y: 2 }], history: [] });
    expect(far.A).toEqual(clipped.A);
    expect(far.mean).toEqual(clipped.mean);
    expectValidCov(far.cov, 'far point');
  });

  it('uses its own samples unclipped, recognised bit for bit', () => {
    const st: XnesState = { ...init(), asked: [[5, 0]] };
    const batch = [{ x: [5, 0], y: 0 }, { x: [0, 1], y: 1 }, { x: [0, -1], y: 2 }];
    const own = xnes.tell(st, { batch, history: batch });
    const injected = xnes.tell({ ...st, asked: [] }, { batch, history: batch });
    // An asked sample at ‖z‖ = 5 > c_z moves the mean by η_μ·u_best·5 along x; injected, by u_best·c_z.
    expect(own.mean[0] / injected.mean[0]).toBeCloseTo(5 / cz, 12);
    expect(own.asked).toEqual([]);
  });

  it('keeps Σ positive definite, with λ_min ≥ 1e-12 λ_max, when most samples are projected (60 generations at a cliff)', () => {
    // The 2-d cliff of the API scenario "spread-cliff" in internal units (prior std 2.5, box ±2σ):
    // 1e12·(1 + ‖x‖²) for x₀ > 0, 1e-6·‖x‖² otherwise. Before the floor, Σ reached a condition
    // number of 1e18 by generation 45 (seed 7) and stopped being positive definite.
    const f = (x: number[]) => (x[0] > 0 ? 1e12 * (1 + x[0] ** 2 + x[1] ** 2) : 1e-6 * (x[0] ** 2 + x[1] ** 2));
    for (const seed of [7, 8, 9]) {
      const states = runProjected('xnes', f, -2, 2, 60, seed);
      states.forEach((st, g) => {
        expectValidCov(st.cov, `seed ${seed} generation ${g}`);
        // The floor holds up to the rounding of A Aᵀ.
        expect(inverseCondition(st.cov), `seed ${seed} generation ${g}`).toBeGreaterThan(0.99e-12);
      });
    }
  });

  it('floors an already ill-conditioned A without turning the distribution', () => {
    // Σ = diag(1, 1e-16): condition 1e16. After one update the floor lifts λ_min to 1e-12 λ_max.
    const st: XnesState = { ...init(), A: [[1, 0], [0, 1e-8]], cov: [[1, 0], [0, 1e-16]], asked: [[0.5, 0], [-0.5, 1e-8], [0, -1e-8]] };
    const batch = [{ x: [0.5, 0], y: 0 }, { x: [-0.5, 1e-8], y: 1 }, { x: [0, -1e-8], y: 2 }];
    const next = xnes.tell(st, { batch, history: batch });
    expectValidCov(next.cov, 'floored');
    expect(inverseCondition(next.cov)).toBeGreaterThan(0.99e-12);
    // The large variance is what the unfloored update gives: only the small one is lifted.
    expect(next.cov[0][0]).toBeGreaterThan(0.1);
    expect(Math.abs(next.cov[0][1])).toBeLessThan(1e-6 * next.cov[0][0]);
  });
});
