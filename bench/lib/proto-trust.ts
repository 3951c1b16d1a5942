/**
 * Two prototypes of prob-cmaes's search-mean control, run outside the engine by bench/lib/bbob-proto.ts
 * (flags `trust` and `restart`), to be measured against Powell's BOBYQA/NEWUOA before any engine change:
 *
 * - `trust`: after each tell, a quadratic model of the recent data moves μ to its trust-region minimiser
 *   (BOBYQA moves to its model's trust-region minimiser at every evaluation; Powell 2009). The model is
 *   lq-CMA-ES's rank-weighted least squares (src/engine/surrogate/quadratic.ts: the most recent
 *   max(q, 2·p_full) points, weights 20…1 by rank) of the kind — linear, diagonal or full quadratic —
 *   with the best leave-one-out R² among those with at least p + 2 points; the step is taken only while
 *   that R² ≥ R2_GATE (the model explains the data). The minimiser lies within Δ of the engine's new μ
 *   in Mahalanobis units of the new Σ (probnes-optimum.ts trustRegionMaximiser), projected onto the box.
 *   The next batch evaluates μ (the default profile hands μ out once per generation), and Powell's
 *   rule adapts Δ with the ratio r = (m(μ_e) − f(μ)) / (m(μ_e) − m(μ)) of the actual to the predicted
 *   decrease (μ_e the engine's mean the step started from, m the model): Δ halves when r < 0.1,
 *   doubles (up to DELTA_MAX) when r > 0.7, down to DELTA_MIN.
 * - `restart`: a scale-free restart rule. The search restarts from a uniform point of the box with the
 *   prior's Σ (the history is kept: the GP and the model use it) when the model's own statistics say
 *   nothing is left to gain here: the predicted decrease within 2 standard deviations of ν is below
 *   10⁻⁹ of the range of the observed values for 2 generations in a row (invariant to affine
 *   transformations of y and to the scale of x). A second trigger, no improvement of the best value for
 *   10 + ⌈30·d/q⌉ generations (CMA-ES's TolStagnation), restarted slow ill-conditioned runs (f2, f10,
 *   f11 at d = 5) and was dropped.
 * - `wide` (with `trust`): the first trust radius 2·DELTA_0.
 * - `handoff` (with `trust`): the trust step stops once the engine's GP mean is diagonal or full
 *   quadratic, when the engine's own model step (ALGORITHM.md §24) takes over.
 */
import { cholesky, fromRows, solveLower } from '../../src/engine/linalg/index.js';
import { leastSquaresQr } from '../../src/engine/linalg/least-squares.js';
import { Rng } from '../../src/engine/random/index.js';
import { trustRegionMaximiser } from '../../src/engine/strategies/probnes-optimum.js';
import type { BaseState, Observation } from '../../src/engine/strategies/types.js';
import { coefficientCount, features, maxModelSize, MAX_WEIGHT, type ModelKind } from '../../src/engine/surrogate/quadratic.js';

export const R2_GATE = 0.9;
export const DELTA_0 = 2, DELTA_MIN = 0.1, DELTA_MAX = 8;

export interface TrustState {
  delta: number;
  /** The last trust step: where μ went, the engine's mean it left, and the model's values at both. */
  pending: { x: number[]; from: number[]; mFrom: number; mTo: number } | null;
  stalls: number;
  best: number;
  sinceBest: number; // kept for the record: the stagnation rule (10 + ⌈30·d/q⌉ generations) was measured and dropped
  restarts: number;
  rng: Rng;
}

/** `wide`: the first trust radius 4 instead of DELTA_0 (and after a restart). */
export function initTrust(seed: number, wide = false): TrustState {
  return { delta: wide ? 2 * DELTA_0 : DELTA_0, pending: null, stalls: 0, best: Infinity, sinceBest: 0, restarts: 0, rng: Rng.fromSeed(1000 + seed) };
}

interface Fitted {
  kind: ModelKind;
  beta: number[];
  centre: number[];
  r2: number;
}

/** Rank-weighted least squares of one kind with its leave-one-out R² (weights fixed, each point left out in turn). */
function fitKind(data: readonly Observation[], d: number, kind: ModelKind): Fitted | null {
  const p = coefficientCount(kind, d);
  const n = data.length;
  if (n < p + 2) return null;
  const order = data.map((_, i) => i).sort((a, b) => data[a].y - data[b].y);
  const centre = data[order[0]].x;
  const w = order.map((_, r) => MAX_WEIGHT - ((MAX_WEIGHT - 1) * r) / (n - 1));
  const z = order.map((i) => features(kind, data[i].x.map((v, k) => v - centre[k])));
  const y = order.map((i) => data[i].y);
  const rows = z.map((row, r) => row.map((v) => w[r] * v));
  const rhs = y.map((v, r) => w[r] * v);
  const beta = leastSquaresQr(rows, rhs);
  if (!beta || !beta.every(Number.isFinite)) return null;
  const wSum = w.reduce((s, v) => s + v * v, 0);
  const yBar = y.reduce((s, v, r) => s + w[r] * w[r] * v, 0) / wSum;
  let sse = 0, sst = 0;
  for (let r = 0; r < n; r++) {
    const bl = leastSquaresQr(rows.filter((_, k) => k !== r), rhs.filter((_, k) => k !== r));
    if (!bl) return null;
    const pred = z[r].reduce((s, v, k) => s + v * bl[k], 0);
    sse += w[r] * w[r] * (y[r] - pred) ** 2;
    sst += w[r] * w[r] * (y[r] - yBar) ** 2;
  }
  return { kind, beta, centre: centre.slice(), r2: sst > 0 ? 1 - sse / sst : -Infinity };
}

function modelValue(f: Fitted, x: readonly number[]): number {
  return features(f.kind, x.map((v, k) => v - f.centre[k])).reduce((s, v, k) => s + v * f.beta[k], 0);
}

/** The model with the best leave-one-out R² over the kinds the recent data allow, or null. */
export function bestModel(history: readonly Observation[], d: number, q: number): Fitted | null {
  const recent = history.slice(-maxModelSize(d, q));
  let best: Fitted | null = null;
  for (const kind of ['linear', 'diagonal', 'full'] as const) {
    const f = fitKind(recent, d, kind);
    if (f && (!best || f.r2 > best.r2)) best = f;
  }
  return best;
}

/** The model's trust-region minimiser around N(μ, Σ) within radius (Mahalanobis), projected onto the box. */
function minimiser(f: Fitted, mean: number[], cov: number[][], radius: number, box: { lower: number[]; upper: number[] }): number[] {
  const d = mean.length;
  const L = cholesky(fromRows(cov)).L;
  const l = (i: number, j: number) => L.data[i * d + j];
  // −m as the maximised quadratic: gradient and Hessian/2 at μ.
  const b = f.beta.slice(1, 1 + d);
  const H = Array.from({ length: d }, () => new Array<number>(d).fill(0));
  if (f.kind !== 'linear') for (let i = 0; i < d; i++) H[i][i] = f.beta[1 + d + i];
  if (f.kind === 'full') {
    let k = 1 + 2 * d;
    for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) H[i][j] = H[j][i] = f.beta[k++] / 2;
  }
  const delta = mean.map((m, i) => m - f.centre[i]);
  const grad = b.map((bi, i) => -(bi + 2 * H[i].reduce((s, a, j) => s + a * delta[j], 0)));
  const g = Array.from({ length: d }, (_, j) => grad.reduce((s, v, i) => s + l(i, j) * v, 0));
  const HL = H.map((row) => Array.from({ length: d }, (_, j) => -row.reduce((s, a, k) => s + a * l(k, j), 0)));
  const Hw = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => HL.reduce((s, row, k) => s + l(k, i) * row[j], 0)));
  const x = trustRegionMaximiser(g, Hw, radius);
  return mean.map((m, i) => Math.min(box.upper[i], Math.max(box.lower[i], m + x.reduce((s, xj, j) => s + l(i, j) * xj, 0))));
}

function mahalanobis(a: readonly number[], b: readonly number[], cov: number[][]): number {
  const L = cholesky(fromRows(cov)).L;
  return Math.hypot(...solveLower(L, Float64Array.from(a, (v, i) => v - b[i])));
}

/** After the engine's tell: Powell's radius update for the last step, then the next step (or a restart). */
export function trustAfterTell<S extends BaseState>(
  ts: TrustState, state: S, history: readonly Observation[], batch: readonly Observation[], box: { lower: number[]; upper: number[] },
  opts: { trust: boolean; restart: boolean; handoff: boolean; q: number },
): S {
  const d = state.dim;
  if (ts.pending) {
    const pend = ts.pending;
    const obs = batch.find((o) => o.x.every((v, i) => Math.abs(v - pend.x[i]) <= 1e-9 * (1 + Math.abs(v))));
    const predicted = pend.mFrom - pend.mTo;
    if (obs && predicted > 0) {
      const r = (pend.mFrom - obs.y) / predicted;
      if (r < 0.1) ts.delta = Math.max(ts.delta / 2, DELTA_MIN);
      else if (r > 0.7) ts.delta = Math.min(ts.delta * 2, DELTA_MAX);
    }
    ts.pending = null;
  }
  const bestNow = Math.min(...batch.map((o) => o.y));
  if (bestNow < ts.best) [ts.best, ts.sinceBest] = [bestNow, 0];
  else ts.sinceBest++;
  const gp = (state as BaseState & { gp?: { basis?: string } | null }).gp;
  const engineModel = gp?.basis === 'diagonal' || gp?.basis === 'full';
  const stepping = opts.trust && !(opts.handoff && engineModel);
  const model = stepping || opts.restart ? bestModel(history, d, opts.q) : null;
  if (opts.restart) {
    let stalled = false;
    if (model) {
      const u = minimiser(model, state.mean, state.cov, 2, box);
      const gain = modelValue(model, state.mean) - modelValue(model, u);
      const ys = history.map((o) => o.y);
      const range = Math.max(...ys) - Math.min(...ys);
      ts.stalls = gain < 1e-9 * range ? ts.stalls + 1 : 0;
      stalled = ts.stalls >= 2;
    }
    if (stalled) {
      ts.restarts++;
      [ts.stalls, ts.sinceBest, ts.delta] = [0, 0, DELTA_0];
      const mean = box.lower.map((lo, i) => lo + ts.rng.uniform() * (box.upper[i] - lo));
      const cov = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (_, j) => (i === j ? 1 : 0)));
      return { ...state, mean, cov };
    }
  }
  if (stepping && model && model.r2 >= R2_GATE) {
    const u = minimiser(model, state.mean, state.cov, ts.delta, box);
    const mFrom = modelValue(model, state.mean), mTo = modelValue(model, u);
    if (u.every(Number.isFinite) && mTo < mFrom && mahalanobis(u, state.mean, state.cov) >= 1e-3) {
      ts.pending = { x: u.slice(), from: state.mean.slice(), mFrom, mTo };
      return { ...state, mean: u };
    }
  }
  return state;
}
