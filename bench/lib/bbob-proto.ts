/**
 * Prototypes of changes to prob-cmaes's first generations, run outside the engine by wrapping its
 * ask/tell (bench:bbob-proto), so they can be measured against the peers before any engine change:
 *
 * - `stencil`: the first generation is Powell's 2d + 1 design along the prior's principal axes,
 *   μ₀ and μ₀ ± Δ·√λ_i·v_i (Σ₀ = Σ λ_i v_i v_iᵀ; Δ = 1 prior standard deviation), instead of μ₀ and q − 1
 *   random draws; every later generation is the method's own.
 * - `bigfirst`: the first generation is μ₀ and 2d random draws from the prior (as many points as the
 *   stencil, drawn at random), to tell the design from the size.
 * - `early`: until the engine's GP mean is diagonal or full quadratic (and so its own model point,
 *   ALGORITHM.md §24, starts), the last BQ point of each batch is replaced by the trust-region
 *   optimum (radius `optimum_radius` of ν) of a separable quadratic fitted by least squares to the
 *   whole history once it has 2d + 1 points (a diagonal quadratic interpolates the stencil exactly:
 *   Powell's initial model), weighted as lq-CMA-ES weights (best 20, worst 1).
 * - `path` (with `early`): when the early model point's trust-region optimum leaves the box, take instead
 *   the best point of the model along the projected path P(μ + t·Σ∇m(μ)), t ≥ 0, within the trust
 *   radius (the generalized Cauchy point of bound-constrained trust-region methods, as L-BFGS-B and
 *   BOBYQA's bound handling do): coordinates that reach a bound stay on it while the others move on.
 * - `elitist`: after each tell, μ moves to the generation's best point when that point is better than
 *   every earlier value and lies within ν's 3σ ellipsoid (the trust-region step the model proposed,
 *   accepted when it succeeded).
 * - `trust` (with `handoff`, `wide`) and `restart`: a trust-region step of a fitted quadratic for μ and a
 *   scale-free restart rule (bench/lib/proto-trust.ts).
 * - `mfn`: Powell's NEWUOA/BOBYQA model as the first phase (bench/lib/proto-mfn.ts), in coordinates whitened
 *   by the prior (z = L₀⁻¹(u − μ₀), Δ in prior standard deviations, Δ₀ = 1: the peers' initial step). The
 *   first generation is the 2d + 1 stencil μ₀, μ₀ ± L₀e_i (the prior's principal axes when Σ₀ = I, as here);
 *   after every tell every evaluated point joins the least-Frobenius-norm model's set and μ moves to the
 *   model's trust-region step from the best point, which the next generation evaluates first (the default
 *   profile hands μ out once per generation), beside the engine's own BQ points. The phase ends when
 *   Powell's iteration converges (ρ = ρ_end and two more reductions asked); μ is then the best point and
 *   the engine runs unchanged.
 * - `solo` (implies `mfn`): during the phase each generation is the model's one point, as in Powell's methods
 *   (trust-region steps and geometry steps on far points); the engine, told once the stencil, is told
 *   every point of the phase at its end and μ moves to the best point.
 * - `sync` (with `solo`): the engine is told the phase's points q at a time as they come (one generation per
 *   q points), μ moved to the best point after each tell, so its Σ adapts during the phase.
 * - `handoff` (with `mfn` or `solo`): the phase also ends after MFN_PHASE_PER_DIM·d evaluations (`short`: half as many).
 * - `shrink` (with `mfn` or `solo`): at the phase's end Σ becomes Δ²·Σ₀ (Powell's trust region, Δ ≥ ρ, as ν's
 *   1σ ellipsoid) instead of the engine's own Σ, which grows during the phase when its data crowd around
 *   the model's iterates (Σ's variances 0.2–6 prior variances at the end of a d = 5 phase on f17).
 * - `reset` (with `mfn` or `solo`): at the phase's end Σ becomes the prior's Σ₀ (a fresh start at the best point).
 * - `hess` (with `mfn` or `solo`): at the phase's end Σ becomes L₀ H⁻¹ L₀ᵀ, the model's inverse Hessian (in z)
 *   scaled to the prior's volume (det = 1 in z), when H is positive definite; Σ₀ otherwise (as `reset`).
 */
import { performance } from 'node:perf_hooks';
import { bbobProblem } from '../../src/engine/benchmarks/bbob.js';
import { resolveOptions, type MethodName, type Options } from '../../src/engine/index.js';
import { cholesky, fromRows, solveLower, symEig } from '../../src/engine/linalg/index.js';
import { leastSquaresQr } from '../../src/engine/linalg/least-squares.js';
import { Rng } from '../../src/engine/random/index.js';
import { modelOptimumPoint } from '../../src/engine/strategies/probnes-optimum.js';
import { getStrategy } from '../../src/engine/strategies/registry.js';
import { generationSize, type BaseState, type Observation } from '../../src/engine/strategies/types.js';
import { bestPoint, initMfn, mfnNext, mfnObserve, mfnStencil } from './proto-mfn.js';
import { initTrust, trustAfterTell } from './proto-trust.js';
import { optionsFor, type RunRecord } from './run.js';

export const PROTO_FLAGS = ['stencil', 'bigfirst', 'early', 'elitist', 'path', 'trust', 'restart', 'handoff', 'wide', 'mfn', 'solo', 'sync', 'shrink', 'reset', 'short', 'hess'] as const;
export type ProtoFlag = (typeof PROTO_FLAGS)[number];

/** `mfn`/`solo` with `handoff`: the Powell phase's evaluations per dimension at most. */
export const MFN_PHASE_PER_DIM = 10;

export interface ProtoSpec {
  method: MethodName;
  options: Options;
  flags: ProtoFlag[];
  fn: number;
  dim: number;
  instance: number;
  budget: number;
  batch: number;
  tag: string;
}

const BOX = 5, PRIOR_STD = 2;

/** The symmetric eigen-decomposition of a small SPD matrix by Jacobi rotations (Σ₀ = I in practice). */
function principalAxes(S: number[][]): { values: number[]; vectors: number[][] } {
  const d = S.length, A = S.map((r) => r.slice());
  const V: number[][] = S.map((_, i) => S.map((__, j) => (i === j ? 1 : 0)));
  for (let sweep = 0; sweep < 50; sweep++) {
    let off = 0;
    for (let i = 0; i < d; i++) for (let j = i + 1; j < d; j++) off += A[i][j] ** 2;
    if (off < 1e-24) break;
    for (let p = 0; p < d; p++) for (let q = p + 1; q < d; q++) {
      if (Math.abs(A[p][q]) < 1e-300) continue;
      const th = 0.5 * Math.atan2(2 * A[p][q], A[q][q] - A[p][p]), c = Math.cos(th), s = Math.sin(th);
      for (let k = 0; k < d; k++) {
        const akp = A[k][p], akq = A[k][q];
        A[k][p] = c * akp - s * akq;
        A[k][q] = s * akp + c * akq;
      }
      for (let k = 0; k < d; k++) {
        const apk = A[p][k], aqk = A[q][k];
        A[p][k] = c * apk - s * aqk;
        A[q][k] = s * apk + c * aqk;
      }
      for (let k = 0; k < d; k++) {
        const vkp = V[k][p], vkq = V[k][q];
        V[k][p] = c * vkp - s * vkq;
        V[k][q] = s * vkp + c * vkq;
      }
    }
  }
  return { values: A.map((r, i) => r[i]), vectors: Array.from({ length: d }, (_, j) => V.map((r) => r[j])) };
}

/** Powell's design: μ and μ ± Δ·√λ_i v_i. */
export function stencil(mean: number[], cov: number[][], delta = 1): number[][] {
  const { values, vectors } = principalAxes(cov);
  const pts = [mean.slice()];
  values.forEach((l, i) => {
    const s = delta * Math.sqrt(Math.max(l, 0));
    pts.push(mean.map((m, k) => m + s * vectors[i][k]), mean.map((m, k) => m - s * vectors[i][k]));
  });
  return pts;
}

/**
 * A separable quadratic f̂(u) = c + bᵀ(u − u_b) + Σ a_i (u_i − u_b,i)² by rank-weighted least squares on
 * the history (centre u_b the best point), returned maximisable (−f̂) for modelOptimumPoint; null with
 * fewer than 2d + 1 points.
 */
export function separableQuadratic(history: readonly Observation[], d: number): { centre: number[]; a0: number; b: number[]; A: number[][] } | null {
  if (history.length < 2 * d + 1) return null;
  const order = history.map((_, i) => i).sort((a, b) => history[a].y - history[b].y);
  const best = history[order[0]].x;
  const m = order.length;
  const rows: number[][] = [], rhs: number[] = [];
  order.forEach((idx, r) => {
    const w = m === 1 ? 20 : 20 - (19 * r) / (m - 1);
    const z = history[idx].x.map((v, i) => v - best[i]);
    rows.push([1, ...z, ...z.map((v) => v * v)].map((v) => w * v));
    rhs.push(w * history[idx].y);
  });
  const beta = leastSquaresQr(rows, rhs);
  if (!beta || !beta.every(Number.isFinite)) return null;
  return {
    centre: best.slice(), a0: -beta[0], b: beta.slice(1, 1 + d).map((v) => -v),
    A: Array.from({ length: d }, (_, i) => Array.from({ length: d }, (__, j) => (i === j ? -beta[1 + d + i] : 0))),
  };
}

/** One BBOB run of a prototype (bench:bbob's protocol), as bench/lib/run.ts's RunRecord. */
export function runProto(spec: ProtoSpec): RunRecord {
  const t0 = performance.now();
  const d = spec.dim;
  const p = bbobProblem(spec.fn, d, spec.instance);
  const toX = (u: readonly number[]): number[] => u.map((v) => Math.min(BOX, Math.max(-BOX, PRIOR_STD * v)));
  const toU = (x: readonly number[]): number[] => x.map((v) => v / PRIOR_STD);
  const strategy = getStrategy(spec.method);
  const options = resolveOptions(spec.method, d, optionsFor(spec.method, spec.options));
  const box = { lower: Array<number>(d).fill(-BOX / PRIOR_STD), upper: Array<number>(d).fill(BOX / PRIOR_STD) };
  let state: BaseState = strategy.init({ dim: d, batchSize: spec.batch, options, box }, Rng.fromSeed(spec.instance));
  const history: Observation[] = [], values: number[] = [], elapsed: number[] = [], ends: number[] = [];
  const has = (f: ProtoFlag) => spec.flags.includes(f);
  const radius = typeof options.optimum_radius === 'number' ? options.optimum_radius : 3;
  const trust = initTrust(spec.instance, spec.flags.includes('wide')); // `trust` and `restart`: bench/lib/proto-trust.ts
  // `mfn`/`solo`: Powell's phase in the prior's whitened coordinates z = L₀⁻¹(u − μ₀) (bench/lib/proto-mfn.ts).
  const solo = has('solo');
  const mu0 = state.mean.slice(), cov0 = state.cov.map((row) => row.slice()), L0 = cholesky(fromRows(state.cov)).L;
  // The box in z when L₀ is diagonal (Σ₀ = I here), so the trust step respects it; else steps are projected.
  const diagonal = L0.data.every((v, k) => k % (d + 1) === 0 || v === 0);
  const zBox = diagonal ? { lower: box.lower.map((lo, i) => (lo - mu0[i]) / L0.data[i * (d + 1)]), upper: box.upper.map((up, i) => (up - mu0[i]) / L0.data[i * (d + 1)]) } : null;
  let mfn = has('mfn') || solo ? initMfn(d, { delta0: 1, geometry: solo, box: zBox }) : null;
  const fromZ = (z: readonly number[]): number[] => mu0.map((m, i) => Math.min(box.upper[i], Math.max(box.lower[i], m + z.reduce((s, v, j) => s + L0.data[i * d + j] * v, 0))));
  const toZ = (u: readonly number[]): number[] => Array.from(solveLower(L0, Float64Array.from(u, (v, i) => v - mu0[i])));
  let untold: Observation[] = []; // `solo`: the phase's points the engine has not been told
  const endMfn = () => {
    if (!mfn) return;
    if (untold.length) state = strategy.tell(state, { batch: untold, history: [...history] });
    state = { ...state, mean: fromZ(bestPoint(mfn).x) };
    if (has('reset') || has('hess')) state = { ...state, cov: cov0.map((row) => row.slice()) };
    if (has('hess') && mfn.model) {
      const { values: ev, vectors: V } = symEig(fromRows(mfn.model.H));
      if (ev[0] > 0) {
        const g = Math.exp(ev.reduce((t, v) => t + Math.log(v), 0) / d); // H's geometric-mean eigenvalue
        const Sz = Array.from({ length: d }, (_, i) => Array.from({ length: d }, (__, j) => ev.reduce((t, v, k) => t + (g / v) * V.data[i * d + k] * V.data[j * d + k], 0)));
        const LS = Sz.map((_, i) => Array.from({ length: d }, (__, j) => Sz.reduce((t, row, k) => t + L0.data[i * d + k] * row[j], 0)));
        state = { ...state, cov: LS.map((row) => Array.from({ length: d }, (_, j) => row.reduce((t, v, k) => t + v * L0.data[j * d + k], 0))) };
      }
    }
    if (has('shrink')) {
      const r2 = Math.max(mfn.delta, mfn.rho) ** 2;
      state = { ...state, cov: state.cov.map((row, i) => row.map((_, j) => r2 * L0.data.slice(i * d, i * d + d).reduce((s, v, k) => s + v * L0.data[j * d + k], 0))) };
    }
    [mfn, untold] = [null, []];
  };
  while (values.length < spec.budget) {
    const left = spec.budget - values.length;
    let points: number[][];
    let soloStep = false;
    if (mfn && has('handoff') && values.length >= (has('short') ? 0.5 : 1) * MFN_PHASE_PER_DIM * d) endMfn();
    if (state.generation === 0 && mfn) points = mfnStencil(new Array<number>(d).fill(0), 1).map(fromZ).slice(0, left);
    else if (mfn && solo) {
      const z = mfnNext(mfn, (x) => toZ(fromZ(x)));
      if (z) [points, soloStep] = [[fromZ(z)], true];
      else {
        endMfn();
        continue;
      }
    } else if (state.generation === 0 && has('stencil')) points = stencil(state.mean, state.cov).slice(0, left);
    else {
      const count = Math.min(state.generation === 0 && has('bigfirst') ? 2 * d + 1 : generationSize(state), left);
      const asked = strategy.ask(state, { history, pending: [] }, count);
      state = asked.state;
      points = asked.points;
      const gp = (state as BaseState & { gp?: { basis?: string } | null }).gp;
      const engineModel = gp?.basis === 'diagonal' || gp?.basis === 'full';
      if (has('early') && !engineModel && points.length >= 3) {
        const quad = separableQuadratic(history.map((o) => ({ x: o.x, y: o.y })), d);
        if (quad) {
          const free = modelOptimumPoint(quad, state.mean, state.cov, radius, null);
          const clipped = free.some((v, i) => v < box.lower[i] || v > box.upper[i]);
          const u = has('path') && clipped ? projectedPathPoint(quad, state.mean, state.cov, radius, box) : modelOptimumPoint(quad, state.mean, state.cov, radius, box);
          const L = cholesky(fromRows(state.cov)).L;
          const far = points.every((q) => Math.hypot(...solveLower(L, Float64Array.from(u, (v, i) => v - q[i]))) >= 0.1);
          if (u.every(Number.isFinite) && far) points[points.length - 1] = u;
        }
      }
    }
    const bestBefore = history.reduce((m, o) => Math.min(m, o.y), Infinity);
    const batch: Observation[] = points.map((u) => {
      const x = toX(u);
      const y = p.f(x);
      values.push(y);
      return { x: toU(x), y };
    });
    history.push(...batch);
    if (mfn) for (const o of batch) mfnObserve(mfn, toZ(o.x), o.y);
    if (soloStep) {
      untold.push(...batch);
      if (has('sync') && mfn && untold.length >= spec.batch) {
        state = { ...strategy.tell(state, { batch: untold, history: [...history] }), mean: fromZ(bestPoint(mfn).x) };
        untold = [];
      }
    } else state = strategy.tell(state, { batch, history: [...history] });
    if (mfn && !solo) {
      // μ to the model's trust-region step (evaluated first by the next generation), or the phase ends.
      const z = mfnNext(mfn, (x) => toZ(fromZ(x)));
      if (z) state = { ...state, mean: fromZ(z) };
      else endMfn();
    }
    if (has('elitist')) {
      const b = batch.reduce((m, o) => (o.y < m.y ? o : m), batch[0]);
      const L = cholesky(fromRows(state.cov)).L;
      const inside = Math.hypot(...solveLower(L, Float64Array.from(b.x, (v, i) => v - state.mean[i]))) <= 3;
      if (b.y < bestBefore && inside) state = { ...state, mean: b.x.slice() };
    }
    if (has('trust') || has('restart')) state = trustAfterTell(trust, state, history, batch, box, { trust: has('trust'), restart: has('restart'), handoff: has('handoff'), q: spec.batch });
    elapsed.push(performance.now() - t0);
    ends.push(values.length);
  }
  return {
    method: spec.method, function: `bbob-f${spec.fn}`, dim: d, seed: spec.instance, batch: spec.batch, optimum: p.optimum,
    values, mean_values: [], timings: { total_ms: performance.now() - t0, ask_ms: 0, tell_ms: 0, updates: ends.length },
    elapsed_ms: elapsed, generation_ends: ends, instance: spec.instance, tag: spec.tag,
  };
}

/** The model's best point along the projected path P(μ + t·Σ∇m(μ)) within Mahalanobis radius ρ (200 steps of t). */
export function projectedPathPoint(quad: { centre: number[]; a0: number; b: number[]; A: number[][] }, mean: number[], cov: number[][], radius: number, box: { lower: number[]; upper: number[] }): number[] {
  const d = mean.length;
  const m = (u: number[]) => {
    const z = u.map((v, i) => v - quad.centre[i]);
    return quad.a0 + z.reduce((s, v, i) => s + quad.b[i] * v, 0) + z.reduce((s, v, i) => s + v * quad.A[i].reduce((t, a, j) => t + a * z[j], 0), 0);
  };
  const zc = mean.map((v, i) => v - quad.centre[i]);
  const grad = quad.b.map((bi, i) => bi + 2 * quad.A[i].reduce((s, a, j) => s + a * zc[j], 0));
  const dir = cov.map((row) => row.reduce((s, c, j) => s + c * grad[j], 0)); // Σ∇m: the natural ascent direction
  const L = cholesky(fromRows(cov)).L;
  const dist = (u: number[]) => Math.hypot(...solveLower(L, Float64Array.from(u, (v, i) => v - mean[i])));
  const len = dist(mean.map((v, i) => v + dir[i])) || 1;
  let best = mean.slice(), bestM = m(mean);
  // t up to 4ρ in units of the direction's Mahalanobis length: the projection shortens the path.
  for (let k = 1; k <= 200; k++) {
    const t = (4 * radius * k) / (200 * len);
    const u = mean.map((v, i) => Math.min(box.upper[i], Math.max(box.lower[i], v + t * dir[i])));
    if (dist(u) > radius) break;
    const mu = m(u);
    if (mu > bestM) [best, bestM] = [u, mu];
  }
  return d > 0 ? best : mean;
}
