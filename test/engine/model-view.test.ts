/**
 * Model views (src/engine/views): the grid prediction of a stored ProbNES GP agrees with the
 * strategy's own estimate(); the Laplace covariance of log ℓ agrees with a Hessian taken by second
 * differences of the MAP objective's VALUE (laplace.ts uses differences of its analytic gradient);
 * length scales are mapped into each parameter's scale as the kernel's quadratic form says; a
 * categorical parameter's relevance is the numeric one with the same expected kernel correlation
 * (the kernel on the one-hot encoding written out), its sd by the delta method (central differences).
 */
import { describe, expect, it } from 'vitest';
import { fitGp, mapObjectiveEvaluator, packHyper, probnesPriors, toMat, type QuadraticMean } from '../../src/engine/gp/index.js';
import { cholesky, fromRows, toRows } from '../../src/engine/linalg/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy, type BaseState } from '../../src/engine/index.js';
import { lengthscaleCovariance } from '../../src/engine/views/laplace.js';
import { choiceRelevance, runModelView, type ViewModelSpec } from '../../src/engine/views/model-view.js';
import { oneHot } from '../../src/engine/gp/mixed-kernel.js';

const sphere = (x: number[]) => x.reduce((s, v, i) => s + (i + 1) * (v - 0.5) ** 2, 0);

function probnesState(method: 'prob-cmaes', generations: number): BaseState & { gp: { hyper: never; X: number[][]; negYTilde: number[]; quad?: QuadraticMean | null; yMean: number; yStd: number } } {
  const s = getStrategy(method);
  const options = { ...s.defaults(2, 'default'), candidates: 64 };
  let state = s.init({ dim: 2, batchSize: 4, options }, Rng.fromSeed(3));
  const history: { x: number[]; y: number }[] = [];
  for (let g = 0; g < generations; g++) {
    const { points, state: next } = s.ask(state, { history, pending: [] }, 4);
    for (const x of points) history.push({ x, y: sphere(x) });
    state = s.tell(next, { history, generationPoints: points.map((x) => ({ x, y: sphere(x) })) } as never);
  }
  return state as never;
}

describe('model view: grid', () => {
  it('predicts what the strategy itself estimates at its mean', () => {
    const state = probnesState('prob-cmaes', 3);
    const g = state.gp;
    expect(g).toBeTruthy();
    const spec: ViewModelSpec = { inputShift: [0, 0], inputScale: [1, 1], yOffset: g.yMean, yScale: -g.yStd, priors: 'probnes', stored: { hyper: g.hyper, X: g.X, targets: g.negYTilde, quad: g.quad ?? null } };
    const r = runModelView({ view: 'grid', model: spec, points: [state.mean, [0, 0]] });
    const est = getStrategy('prob-cmaes').estimate!(state, []);
    if (r.view !== 'grid') throw new Error('grid expected');
    expect(r.mean[0]).toBeCloseTo(est.predicted!, 10);
    // The view's std is the GP's latent std; estimate() also adds the basis coefficients' uncertainty
    // when the mean is quadratic (ALGORITHM.md §28), so it can only be larger.
    if (g.quad) expect(r.std[0]).toBeLessThanOrEqual(est.predicted_std! + 1e-12);
    else expect(r.std[0]).toBeCloseTo(est.predicted_std!, 10);
  });

  it('refuses to fit a model to fewer than two points', () => {
    const spec: ViewModelSpec = { inputShift: [0], inputScale: [1], yOffset: 0, yScale: 1, priors: 'probnes', stored: null, data: { U: [[0]], y: [1] } };
    expect(() => runModelView({ view: 'grid', model: spec, points: [[0]] })).toThrow(/at least two/);
  });
});

describe('model view: importance', () => {
  const rng = Rng.fromSeed(11);
  // y depends strongly on u1, weakly on u2: the fitted ℓ_1 must be the shorter.
  const X = Array.from({ length: 30 }, () => Array.from(rng.normals(2)));
  const yRaw = X.map(([a, b]) => Math.sin(2 * a) + 0.05 * b);
  const m = yRaw.reduce((s, v) => s + v, 0) / yRaw.length;
  const sd = Math.sqrt(yRaw.reduce((s, v) => s + (v - m) ** 2, 0) / (yRaw.length - 1));
  const y = yRaw.map((v) => (v - m) / sd);
  const priors = probnesPriors(2);
  const fit = fitGp(X, y, { priors });

  it('Laplace covariance of log ℓ matches the inverse Hessian from second differences of the objective value', () => {
    const C = lengthscaleCovariance(X, y, fit.model.hyper, priors);
    expect(C.kind).toBe('joint');
    // Independent Hessian: −n × second differences of the VALUE (not the gradient), h = 1e-3.
    const ev = mapObjectiveEvaluator(toMat(X), y, priors);
    const phi = packHyper(fit.model.hyper);
    const p = phi.length, n = X.length, h = 1e-3;
    const f = (dx: number[]) => ev.value(phi.map((v, k) => v + dx[k]!));
    const e = (k: number, s: number) => Array.from({ length: p }, (_, j) => (j === k ? s : 0));
    const H = Array.from({ length: p }, (_, i) => Array.from({ length: p }, (_, j) => {
      const pp = f(e(i, h).map((v, k) => v + e(j, h)[k]!));
      const pm = f(e(i, h).map((v, k) => v - e(j, h)[k]!));
      const mp = f(e(i, -h).map((v, k) => v + e(j, h)[k]!));
      const mm = f(e(i, -h).map((v, k) => v - e(j, h)[k]!));
      return (-n * (pp - pm - mp + mm)) / (4 * h * h);
    }));
    const L = cholesky(fromRows(H)).L;
    // (L Lᵀ)⁻¹ columns 0, 1 by solving.
    const inv = toRows(fromRows(invertSpd(toRows(L))));
    for (let a = 0; a < 2; a++) for (let b = 0; b < 2; b++) expect(C.cov![a]![b]).toBeCloseTo(inv[a]![b]!, 3);
  });

  it('ranks the parameter the objective varies with first, in each parameter\'s own scale', () => {
    // Diagonal prior: t_i = m0_i + s_i·u_i, so ℓ_t,i = s_i·ℓ_u,i.
    const s = [2, 0.5];
    const spec: ViewModelSpec = { inputShift: [0, 0], inputScale: [1, 1], yOffset: m, yScale: sd, priors: 'probnes', stored: { hyper: fit.model.hyper, X, targets: y, quad: null } };
    const r = runModelView({ view: 'importance', model: spec, L0: [[s[0]!, 0], [0, s[1]!]] });
    if (r.view !== 'importance') throw new Error('importance expected');
    const [p1, p2] = r.importance.parameters;
    expect(p1!.lengthscale).toBeCloseTo(s[0]! * fit.model.hyper.lengthscales[0]!, 12);
    expect(p2!.lengthscale).toBeCloseTo(s[1]! * fit.model.hyper.lengthscales[1]!, 12);
    expect(p1!.priorStd / p1!.lengthscale).toBeGreaterThan(p2!.priorStd / p2!.lengthscale);
    expect(p1!.logSd).toBeGreaterThan(0);
  });

  it('with a correlated prior, ℓ_t,i is the distance along parameter i at which the kernel falls to e^{-1/2}', () => {
    const L0 = [[1.5, 0], [0.9, 0.4]];
    const spec: ViewModelSpec = { inputShift: [0, 0], inputScale: [1, 1], yOffset: 0, yScale: 1, priors: 'probnes', stored: { hyper: fit.model.hyper, X, targets: y, quad: null } };
    const r = runModelView({ view: 'importance', model: spec, L0 });
    if (r.view !== 'importance') throw new Error('importance expected');
    const ell = fit.model.hyper.lengthscales;
    for (let i = 0; i < 2; i++) {
      const delta = r.importance.parameters[i]!.lengthscale;
      // Δu = L0⁻¹ (δ e_i) by forward substitution; the kernel's exponent is −½ Σ (Δu_j/ℓ_j)².
      const dt = [i === 0 ? delta : 0, i === 1 ? delta : 0];
      const du0 = dt[0]! / L0[0]![0]!;
      const du1 = (dt[1]! - L0[1]![0]! * du0) / L0[1]![1]!;
      expect((du0 / ell[0]!) ** 2 + (du1 / ell[1]!) ** 2).toBeCloseTo(1, 10);
    }
  });
});

/** Inverse of a small SPD matrix by Gauss–Jordan (test-only reference). */
function invertSpd(Lrows: number[][]): number[][] {
  const n = Lrows.length;
  const A = Array.from({ length: n }, (_, i) => Array.from({ length: n }, (_, j) => Lrows[i]!.reduce((s, v, k) => s + v * (Lrows[j]![k] ?? 0), 0)));
  const M = A.map((row, i) => [...row, ...Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))]);
  for (let c = 0; c < n; c++) {
    const piv = M[c]![c]!;
    for (let j = 0; j < 2 * n; j++) M[c]![j]! /= piv;
    for (let r = 0; r < n; r++) if (r !== c) {
      const f = M[r]![c]!;
      for (let j = 0; j < 2 * n; j++) M[r]![j]! -= f * M[c]![j]!;
    }
  }
  return M.map((row) => row.slice(n));
}

describe('model view: a categorical parameter\'s relevance', () => {
  const p = [0.5, 0.3, 0.2];
  const ell = [0.7, 1.9, 0.4];
  const w = ell.map((l) => 1 / (l * l));

  it('ρ is the RBF kernel on the one-hot encoding averaged over two draws from the prior, and r the numeric relevance with the same expected correlation', () => {
    // Written out: exp(−½ Σ_k (e_a − e_b)_k² / ℓ_k²) weighted by p_a p_b (gp/mixed-kernel.ts's equivalence).
    let rho = 0;
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) {
      const ea = oneHot([a], [3]), eb = oneHot([b], [3]);
      rho += p[a]! * p[b]! * Math.exp(-0.5 * ea.reduce((s, v, k) => s + (v - eb[k]!) ** 2 / ell[k]! ** 2, 0));
    }
    const c = choiceRelevance(w, p, 0, null);
    expect(c.correlation).toBeCloseTo(rho, 14);
    // A numeric parameter of relevance r: Δ ~ N(0, 2σ²), E exp(−Δ²/2ℓ²) = (1 + 2r²)^(−1/2) (Gaussian integral).
    expect((1 + 2 * c.relevance ** 2) ** -0.5).toBeCloseTo(rho, 14);
    expect(c.logSd).toBeNull();
    // Limits: equal choices (ℓ → ∞) are irrelevant; unrelated ones (ℓ → 0) reach √((1/Σp²)² − 1)/√2.
    expect(choiceRelevance([0, 0, 0], p, 0, null).relevance).toBe(0);
    const sumSq = p.reduce((s, v) => s + v * v, 0);
    expect(choiceRelevance([1e6, 1e6, 1e6], p, 0, null).relevance).toBeCloseTo(Math.sqrt((sumSq ** -2 - 1) / 2), 10);
  });

  it('the Laplace sd of log r is the delta method on the one-hot block: matches central differences in log ℓ', () => {
    const logR = (l: number[]) => Math.log(choiceRelevance(l.map((v) => 1 / (v * v)), p, 0, null).relevance);
    const h = 1e-6;
    const grad = ell.map((_, a) => (logR(ell.map((v, k) => (k === a ? v * Math.exp(h) : v))) - logR(ell.map((v, k) => (k === a ? v * Math.exp(-h) : v)))) / (2 * h));
    // A covariance of log ℓ over [2 numeric columns, the block]: the block's part enters, nothing else.
    const C = [[9, 0, 0, 0, 0], [0, 9, 0, 0, 0], [0, 0, 0.04, 0.01, 0], [0, 0, 0.01, 0.09, -0.02], [0, 0, 0, -0.02, 0.16]];
    const block = C.slice(2).map((r) => r.slice(2));
    const expected = Math.sqrt(grad.reduce((s, ga, a) => s + grad.reduce((t, gb, b) => t + ga * block[a]![b]! * gb, 0), 0));
    expect(choiceRelevance(w, p, 2, C).logSd).toBeCloseTo(expected, 6);
  });

  it('a GP fitted on φ ranks the categorical parameter that drives y above a numeric one that does not', () => {
    const rng = Rng.fromSeed(5);
    const U = Array.from({ length: 30 }, (_, i) => [...Array.from(rng.normals(1)), i % 3]);
    const y = U.map(([u, c]) => [0, 1, 2][c!]! + 0.01 * u!);
    const spec: ViewModelSpec = { inputShift: [0, 0, 0, 0], inputScale: [1, 1, 1, 1], categories: [3], yOffset: 0, yScale: 1, priors: 'probnes', stored: null, data: { U, y } };
    const r = runModelView({ view: 'importance', model: spec, L0: [[1]], choicePriors: [[1 / 3, 1 / 3, 1 / 3]] });
    if (r.view !== 'importance') throw new Error('importance expected');
    expect(r.importance.categorical).toHaveLength(1);
    expect(r.importance.categorical[0]!.relevance).toBeGreaterThan(r.importance.parameters[0]!.priorStd / r.importance.parameters[0]!.lengthscale);
    // The grid at each choice: the model's mean follows the choice's level.
    const g = runModelView({ view: 'grid', model: { ...spec, fittedHyper: r.fitted }, points: [[0, 0], [0, 1], [0, 2]] });
    if (g.view !== 'grid') throw new Error('grid expected');
    expect(g.mean[0]!).toBeLessThan(g.mean[1]!);
    expect(g.mean[1]!).toBeLessThan(g.mean[2]!);
  });
});
