/**
 * The ProbNES methods on a space with categorical parameters (InitSpec.categories; ALGORITHM.md
 * §27): the search distribution is ν = N(μ, Σ) over the d_c continuous coordinates times one
 * categorical distribution q_j per categorical parameter, a point is [u, c], and every update is the
 * BQ natural gradient of E_ν[−ỹ] under the GP with the mixed kernel (gp/mixed-kernel.ts), in closed
 * form (quadrature/mixed.ts).
 *
 * One generation (tell), as probnes-core.ts's §1 with the mixed pieces:
 *   1. active set: the Mahalanobis test of §1 on the continuous part (every choice counts);
 *   2. standardise over it, z = −ỹ;
 *   3. MAP fit of the constant-mean GP on φ(x) = [u, one-hot(c)] (ProbNES priors in d_c + Σ K_j
 *      dimensions, warm-started from the previous MAP);
 *   4. (g_μ, G) from mixedExpectedGradient and §4's natural-gradient updates of μ and Σ (the method's
 *      covariance form, learning rates, μ and Σ kept inside the bounds as the default profile does);
 *      q_j ← margin(q_j + η_μ ĝ_j), ĝ_j the expected natural gradient in q_j (categoricalNaturalGradient)
 *      and the margin of CatCMA (distributions/categorical.ts).
 * ask: μ with each parameter's most probable choice once per generation (params.includeMean), the
 * other points drawn i.i.d. from ν (u ~ N(μ, Σ), c_j ~ q_j): the paper's "random sampling" selection,
 * since the batch-BQ selection of §5 and the default profile's quadratic mean, model optimum and
 * trust-region steps are defined for the Gaussian part only and are not used here.
 *
 * Conditional coordinates (InitSpec.conditions, ALGORITHM.md §30): the GP's inputs impute the
 * inactive ones (a continuous coordinate to the prior mean 0, a one-hot block to zeros), for the
 * training points and wherever the model is evaluated. The closed-form BQ of quadrature/mixed.ts
 * integrates k(φ(x), ·) over ν with every coordinate free, which imputation breaks, so on a
 * conditional space the expected natural gradient of E_ν[m(φ̃(x))] (m the GP posterior mean, φ̃ the
 * imputed encoding) is estimated by Monte Carlo over ν instead (conditionalGradient): the same
 * quantity as §3's, by sampling ν rather than in closed form.
 *
 * State: probnes-state.ts's, with mean/cov over the continuous coordinates (`dim` counts all), the
 * stored GP's X in φ coordinates, and `categorical` (q_j). A state without `categorical` is an
 * ordinary ProbNES state: probnes-core.ts dispatches here only when it has one, so numeric studies
 * are unchanged and their stored states need no migration.
 */
import { InvalidInputError } from '../errors.js';
import { Rng } from '../random/index.js';
import { fitGp, predict, probnesPriors } from '../gp/index.js';
import { encodeMixed } from '../gp/mixed-kernel.js';
import { categoricalNaturalGradient, mixedBqIntegral, mixedExpectedGradient, type MixedMeasure } from '../quadrature/mixed.js';
import { applyMargin, marginFloor, mixedLayout, modeOf, sampleChoices } from '../distributions/categorical.js';
import { activeMask, checkConditions, impute, type Condition } from '../distributions/conditional.js';
import { cholesky, fromRows, solveLowerT } from '../linalg/index.js';
import type { GpModel } from '../gp/index.js';
import { rebuildModel, sampleFrom } from './probnes-bq.js';
import { activeSet, standardise } from './probnes-data.js';
import { updateCov, updateMean } from './probnes-updates.js';
import { clampToBounds, limitCovToBounds } from './bounds.js';
import { NO_START_PHASE, resolveProbnesParams, type ProbnesOwn } from './probnes-params.js';
import { PROBNES_STATE_VERSION, finiteOrNull, integralDiagnostics, stepSizes, type ProbnesState } from './probnes-state.js';
import type { AskContext, AskResult, Estimate, InitSpec, TellContext } from './types.js';
import type { MethodName } from './methods.js';

export function initProbnesMixed(method: MethodName, own: ProbnesOwn, spec: InitSpec, rng: Rng): ProbnesState {
  const q = spec.categories ?? [];
  const dc = spec.dim - q.length;
  if (q.length === 0 || !(Number.isInteger(dc) && dc >= 0)) throw new InvalidInputError(`${method}: a mixed space needs categories and dim ≥ their number`);
  if (!(Number.isInteger(spec.batchSize) && spec.batchSize >= 1)) throw new InvalidInputError('batch size must be ≥ 1');
  // The start phase (§29) models continuous coordinates only: a mixed space starts as before.
  const conditional = (spec.conditions?.length ?? 0) > 0;
  const params = Object.freeze({ ...resolveProbnesParams(method, own, spec.options, spec.dim, spec.budget ?? null), ...NO_START_PHASE, ...(conditional ? { conditionalGivenActive: true as const } : {}) });
  const bound = (v: number) => (Number.isFinite(v) ? v : null);
  return {
    version: PROBNES_STATE_VERSION,
    method,
    dim: spec.dim,
    batchSize: spec.batchSize,
    generation: 0,
    rng: rng.state(),
    params,
    mean: new Array<number>(dc).fill(0),
    cov: Array.from({ length: dc }, (_, i) => Array.from({ length: dc }, (_, j) => (i === j ? 1 : 0))),
    categorical: q.map((p) => applyMargin(p, marginFloor(p.length, q.length))),
    ...(conditional ? { conditions: checkConditions(spec.conditions, dc, q.map((p) => p.length)) } : {}),
    diagnostics: { integral_mean: null, integral_std: null, n_active: null },
    meanAsked: false,
    gp: null,
    lastStep: null,
    bounds: spec.box ? { lower: spec.box.lower.slice(0, dc).map(bound), upper: spec.box.upper.slice(0, dc).map(bound) } : null,
    optimumRadius: params.optimumRadius,
    optimumAsked: null,
    start: null,
  };
}

export function askProbnesMixed(state: ProbnesState, _ctx: AskContext, count: number): AskResult<ProbnesState> {
  if (!(Number.isInteger(count) && count >= 0)) throw new InvalidInputError(`count must be a non-negative integer, got ${count}`);
  const { dc } = mixedLayout(state);
  const rng = Rng.fromState(state.rng);
  const q = state.categorical!;
  const includeMean = count > 0 && state.params.includeMean && !state.meanAsked && (state.batchSize > 1 || state.generation % 2 === 0);
  const points: number[][] = includeMean ? [[...state.mean, ...q.map(modeOf)]] : [];
  const n = count - points.length;
  const conts = dc > 0 ? sampleFrom(state.mean, state.cov, n, rng) : Array.from({ length: n }, () => [] as number[]);
  for (const u of conts) points.push([...u, ...sampleChoices(rng, q)]);
  return { points, state: { ...state, rng: rng.state(), meanAsked: state.meanAsked || includeMean } };
}

export function tellProbnesMixed(state: ProbnesState, ctx: TellContext): ProbnesState {
  const history = ctx.history;
  for (const o of history) if (o.x.length !== state.dim || !o.x.every(Number.isFinite) || !Number.isFinite(o.y)) throw new InvalidInputError(`history points must be ${state.dim} finite coordinates with a finite y`);
  const next: ProbnesState = { ...state, generation: state.generation + 1, meanAsked: false };
  if (history.length === 0) return next;
  const { dc, K } = mixedLayout(state);
  const p = state.params;
  const rng = Rng.fromState(state.rng);
  // 1–2: active set on the continuous part, standardise, z = −ỹ.
  const idx = dc > 0
    ? activeSet(history.map((o) => ({ x: continuousPart(state, o.x, dc), y: o.y })), state.mean, state.cov, { enabled: p.activeSet, quantile: p.activeSetQuantile, minSize: state.batchSize, maxSize: p.activeSetCap })
    : history.map((_, j) => j).slice(-Math.max(p.activeSetCap, state.batchSize, 1));
  const X = idx.map((j) => encodeAt(state, history[j]!.x.map((v, k) => (k < dc ? v : Math.round(v))), dc, K));
  const st = standardise(idx.map((j) => history[j]!.y));
  const negYTilde = st.yTilde.map((v) => -v);
  // 3: MAP fit on φ, warm-started from the previous MAP.
  const D = X[0]!.length;
  const warm = p.gpWarmStart && state.gp && state.gp.hyper.lengthscales.length === D ? state.gp.hyper : null;
  const fit = fitGp(X, negYTilde, { priors: probnesPriors(D), warmStart: warm, restarts: p.gpRestarts, rng });
  const nu: MixedMeasure = { dc, K, q: state.categorical! };
  // 4: natural-gradient ascent of E_ν[−ỹ] in (μ, Σ) and in each q_j.
  const cond = state.conditions ? conditionalGradient(fit.model, state.conditions, nu, state.mean, state.cov, rng, p.conditionalGivenActive === true) : null;
  const grad = cond ?? mixedExpectedGradient(fit.model, nu, state.mean, state.cov);
  const gq = cond ? cond.gq : categoricalNaturalGradient(fit.model, nu, (grad as ReturnType<typeof mixedExpectedGradient>).mq);
  let mean = state.mean, cov = state.cov;
  if (dc > 0) {
    mean = updateMean(state.mean, state.cov, grad.gMean, p.etaMean);
    if (p.meanInBounds && state.bounds) mean = clampToBounds(mean, state.bounds);
    cov = updateCov(p.covForm, state.cov, grad.gCov, p.etaCov);
    if (p.covInBounds && state.bounds) cov = limitCovToBounds(cov, state.bounds);
  }
  const categorical = state.categorical!.map((qj, j) => applyMargin(qj.map((v, a) => v + p.etaMean * gq[j]![a]!), marginFloor(qj.length, K.length)));
  // On a conditional space the integral's closed form does not apply (see the header): the Monte
  // Carlo mean at the pre-update ν is reported, without a posterior std.
  const diagnostics = cond
    ? { integral_mean: finiteOrNull(st.yMean - st.yStd * cond.integral), integral_std: null, n_active: idx.length }
    : integralDiagnostics(st, mixedBqIntegral(fit.model, { dc, K, q: categorical }, mean, cov), idx.length);
  return {
    ...next,
    rng: rng.state(),
    mean,
    cov,
    categorical,
    diagnostics,
    gp: {
      hyper: { ...fit.model.hyper, lengthscales: Array.from(fit.model.hyper.lengthscales) },
      X,
      negYTilde,
      quad: null,
      basis: 'constant',
      activeIdx: idx,
      yMean: st.yMean,
      yStd: st.yStd,
      objective: fit.objective,
      fallbackReason: fit.fallbackReason,
    },
    lastStep: stepSizes(state, mean, cov),
  };
}

/** GP prediction of y at the centre of ν (μ with each parameter's most probable choice), in y units. */
export function estimateProbnesMixed(state: ProbnesState): Estimate {
  if (!state.gp) return { predicted: null, predicted_std: null };
  const { dc, K } = mixedLayout(state);
  const g = state.gp;
  const model = rebuildModel(g.hyper, g.X, g.negYTilde);
  const x = encodeAt(state, [...state.mean, ...state.categorical!.map(modeOf)], dc, K);
  const pr = predict(model, [x]);
  return { predicted: finiteOrNull(g.yMean - g.yStd * pr.mean[0]!), predicted_std: finiteOrNull(g.yStd * Math.sqrt(Math.max(pr.variance[0]!, 0))) };
}

/**
 * The continuous part of x for §1's Mahalanobis test: on a conditional space an inactive coordinate
 * counts as μ's (the point says nothing about it, so it is neither near nor far along it).
 */
function continuousPart(state: ProbnesState, x: number[], dc: number): number[] {
  if (!state.conditions) return x.slice(0, dc);
  const active = activeMask(state.conditions, x);
  return x.slice(0, dc).map((v, i) => (active[i] ? v : state.mean[i]!));
}

/** φ(x), with the inactive coordinates imputed on a conditional space (continuous: 0, the prior mean; one-hot: zeros). */
function encodeAt(state: ProbnesState, x: number[], dc: number, K: number[]): number[] {
  const f = encodeMixed(x, dc, K);
  return state.conditions ? impute(f, activeMask(state.conditions, x), dc, K, new Array<number>(dc).fill(0)) : f;
}

/** Draws from ν per conditional gradient estimate: its standard error is about 3% of the objective's spread under ν. */
const CONDITIONAL_DRAWS = 1024;

/**
 * The expected natural gradient of E_ν[m(φ̃(x))] by Monte Carlo over ν (ALGORITHM.md §30): N draws
 * x_k = [μ + L ε_k, c_k], c_k ~ q, the posterior mean m_k at the imputed encoding, and the
 * score-function estimates with the mean m̄ as baseline (E[score] = 0, so it changes only the variance):
 *   g_μ = (1/N) Σ_k (m_k − m̄) Σ⁻¹(u_k − μ),   Σ⁻¹(u_k − μ) = L⁻ᵀ ε_k
 *   G   = (1/N) Σ_k (m_k − m̄) · ½(Σ⁻¹(u_k − μ)(u_k − μ)ᵀΣ⁻¹ − Σ⁻¹)   (the Σ⁻¹ term vanishes with Σ(m_k − m̄) = 0)
 *   ĝ_j = (1/N) Σ_k (m_k − m̄)(e_{c_kj} − q_j)      (the IGO natural gradient in q_j, ALGORITHM.md §27)
 *
 * `givenActive`: the entries of g_μ and G that involve a conditional coordinate are averaged over
 * the draws where it is active (both, for G_ab) instead of over all N. m does not depend on an
 * inactive coordinate, so the other draws add only noise to them, and dividing by N scales them by
 * P(active): a branch drawn 14% of the time moved its children at 14% of the pace, so they stayed
 * where the prior put them, the branch kept looking worse than it is, and q left it (the lock-in of
 * §30). Averaged given active, they are the natural gradient of the hierarchical distribution
 * q(c)·N(u_A(c); μ_A, Σ_AA), whose Fisher information for a coordinate's parameters carries the same
 * factor P(active) as its gradient. Always-active coordinates and ĝ_j are unchanged.
 */
function conditionalGradient(model: GpModel, conditions: readonly Condition[], nu: MixedMeasure, mean: number[], cov: number[][], rng: Rng, givenActive: boolean): { gMean: number[]; gCov: number[][]; gq: number[][]; integral: number } {
  const { dc, K, q } = nu;
  const N = CONDITIONAL_DRAWS;
  const L = dc > 0 ? cholesky(fromRows(cov)).L : null;
  const scores: Float64Array[] = [];
  const choices: number[][] = [];
  const inputs: number[][] = [];
  const actives: boolean[][] = [];
  for (let k = 0; k < N; k++) {
    const eps = rng.normals(dc);
    const u = mean.map((m, i) => {
      let s = m;
      for (let j = 0; j <= i; j++) s += L!.data[i * dc + j]! * eps[j]!;
      return s;
    });
    const c = sampleChoices(rng, q);
    const x = [...u, ...c];
    const active = activeMask(conditions, x);
    scores.push(L ? solveLowerT(L, eps) : new Float64Array(0));
    choices.push(c);
    // Every draw counts for every coordinate unless `givenActive`.
    actives.push(givenActive ? active : ALL);
    inputs.push(impute(encodeMixed(x, dc, K), active, dc, K, new Array<number>(dc).fill(0)));
  }
  const m = predict(model, inputs).mean;
  let mBar = 0;
  for (let k = 0; k < N; k++) mBar += m[k]! / N;
  const gMean = new Array<number>(dc).fill(0);
  const gCov = Array.from({ length: dc }, () => new Array<number>(dc).fill(0));
  // Draws each entry is averaged over (N for every entry unless `givenActive`).
  const nMean = new Array<number>(dc).fill(0);
  const nCov = Array.from({ length: dc }, () => new Array<number>(dc).fill(0));
  const gq = K.map((kj) => new Array<number>(kj).fill(0));
  for (let k = 0; k < N; k++) {
    const w = m[k]! - mBar;
    const p = scores[k]!;
    const on = actives[k]!;
    for (let a = 0; a < dc; a++) {
      if (on !== ALL && !on[a]) continue;
      gMean[a]! += w * p[a]!;
      nMean[a]!++;
      for (let b = 0; b < dc; b++) {
        if (on !== ALL && !on[b]) continue;
        gCov[a]![b]! += 0.5 * w * p[a]! * p[b]!;
        nCov[a]![b]!++;
      }
    }
    choices[k]!.forEach((ci, j) => q[j]!.forEach((qa, a) => (gq[j]![a]! += (w / N) * ((a === ci ? 1 : 0) - qa))));
  }
  // Two coordinates never active together (exclusive branches) have no joint gradient: 0.
  for (let a = 0; a < dc; a++) {
    gMean[a] = nMean[a]! > 0 ? gMean[a]! / nMean[a]! : 0;
    for (let b = 0; b < dc; b++) gCov[a]![b] = nCov[a]![b]! > 0 ? gCov[a]![b]! / nCov[a]![b]! : 0;
  }
  return { gMean, gCov, gq, integral: mBar };
}

/** A draw's mask when every draw counts for every coordinate (conditionalGradient without `givenActive`). */
const ALL: boolean[] = [];
