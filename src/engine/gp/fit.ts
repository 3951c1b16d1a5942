/**
 * MAP fit of the constant-mean ARD-RBF GP (ALGORITHM.md §2).
 *
 * Glossary: n points, d dimension. X: n×d, y: n (already standardised by the caller, §1 step 2).
 * φ = [log ℓ, log s, ρ, c] as in mll.ts. Starts, in order:
 *   1. the default start ℓ_i = s = ln 2 (GPyTorch's softplus(0), not a prior mode), σ²_n = 2, c = 0,
 *      unless a warm start is given with `coldStart: false`;
 *   2. the warm start (previous MAP) when given — the better MAP objective wins;
 *   3. draws from the priors: `restarts` of them always, and up to 5 more only when every start
 *      above failed (an exception or a non-finite objective).
 * If everything fails, the prior modes are used and `fallbackReason` says why.
 * With `basis` (H, n×p) the objective is the restricted likelihood of the GP with explicit basis
 * functions (reml.ts), and the result carries β̂ and the residual GP instead of a constant-mean GP.
 */
import { EngineError, InvalidInputError, NonFiniteError } from '../errors.js';
import { type Mat, isFiniteMat, isFiniteVec } from '../linalg/index.js';
import { type LbfgsOptions, minimizeLbfgs } from '../optim/lbfgs.js';
import { Rng } from '../random/index.js';
import { toMat, type KnownNoise } from './kernel.js';
import { type MapObjectiveEvaluator, logMarginalLikelihood, logPrior, mapObjectiveEvaluator, packHyper, unpackHyper } from './mll.js';
import { priorModeHyper, samplePriorHyper } from './priors.js';
import { buildBasisModel, knownField, remlObjectiveEvaluator, restrictedLogLikelihood } from './reml.js';
import type { GpFitOptions, GpFitResult, GpHyper, GpModel } from './types.js';

/** Prior-draw starts made when every regular start failed. */
const FAILURE_RESTARTS = 5;

/**
 * L-BFGS settings for the fit. The objective is divided by n, so O(1) tolerances are meaningful.
 * fTol = 1e-7: with noiseless data σ²_n creeps toward its floor (ρ → −∞) with ever smaller gains;
 * 1e-9 doubled the evaluations for changes < 1e-5 in the objective and none in ℓ, s, c at 3 digits.
 */
const FIT_LBFGS: LbfgsOptions = { memory: 10, maxIterations: 200, gradTol: 1e-5, fTol: 1e-7 };

export function defaultStartHyper(d: number): GpHyper {
  return { lengthscales: new Array<number>(d).fill(Math.LN2), outputscale: Math.LN2, noise: 2, constant: 0 };
}

/** The model (Cholesky factor, α) at fixed hyperparameters. Throws NotPositiveDefinite. */
export function buildModel(X: Mat, y: ArrayLike<number>, hyper: GpHyper, known: KnownNoise = null): GpModel {
  const m = logMarginalLikelihood(X, y, hyper, false, known);
  return { hyper, X, y: Float64Array.from(y), L: m.L, alpha: m.alpha, jitter: m.jitter, ...knownField(known) };
}

interface StartResult {
  hyper: GpHyper;
  objective: number;
}

/**
 * One L-BFGS run from `start` on the negated MAP objective; null when it fails (exception or
 * non-finite objective). The gradient is computed only when L-BFGS asks for it (see mll.ts).
 */
function runStart(ev: MapObjectiveEvaluator, d: number, start: GpHyper, count: GpFitResult['evaluations']): StartResult | null {
  let ok = false;
  const fn = {
    value(phi: Float64Array): number {
      count.values++;
      ok = false;
      try {
        const v = -ev.value(phi);
        ok = true;
        return v;
      } catch (e) {
        // A non-PD kernel matrix at a trial step is "step too long" for the line search.
        if (e instanceof EngineError) return NaN;
        throw e;
      }
    },
    gradient(): Float64Array {
      if (!ok) return new Float64Array(d + 3);
      count.gradients++;
      const g = ev.gradient();
      for (let i = 0; i < g.length; i++) g[i] = -g[i];
      return g;
    },
  };
  let res;
  try {
    res = minimizeLbfgs(fn, packHyper(start), FIT_LBFGS);
  } catch (e) {
    if (e instanceof EngineError) return null;
    throw e;
  }
  if (!Number.isFinite(res.f) || !isFiniteVec(res.x)) return null;
  return { hyper: unpackHyper(res.x, d), objective: -res.f };
}

function validHyper(h: GpHyper | null | undefined, d: number): h is GpHyper {
  if (!h || h.lengthscales.length !== d) return false;
  const pos = [...h.lengthscales, h.outputscale, h.noise];
  return pos.every((v) => Number.isFinite(v) && v > 0) && Number.isFinite(h.constant);
}

function validate(X: Mat, y: Float64Array, known: KnownNoise): void {
  if (X.rows === 0 || X.cols === 0) throw new InvalidInputError('fitGp needs at least one point of dimension ≥ 1');
  if (y.length !== X.rows) throw new InvalidInputError(`fitGp: ${X.rows} points but ${y.length} targets`);
  if (!isFiniteMat(X) || !isFiniteVec(y)) throw new InvalidInputError('fitGp: non-finite inputs or targets');
  if (known && (known.length !== X.rows || !Array.from(known).every((v) => Number.isFinite(v) && v >= 0))) {
    throw new InvalidInputError(`fitGp: the known noise must be ${X.rows} finite variances ≥ 0`);
  }
}

/** Best of the starts by MAP objective, or null when all of them failed. */
function bestOf(results: (StartResult | null)[]): StartResult | null {
  let best: StartResult | null = null;
  for (const r of results) if (r && (!best || r.objective > best.objective)) best = r;
  return best;
}

export function fitGp(X: ArrayLike<ArrayLike<number>> | Mat, y: ArrayLike<number>, opts: GpFitOptions): GpFitResult {
  const Xm = toMat(X);
  const yv = Float64Array.from(y);
  const known = opts.knownNoise ?? null;
  validate(Xm, yv, known);
  const d = Xm.cols;
  const rng = opts.rng ?? Rng.fromSeed(Xm.rows * 7919 + d);
  const drawStart = () => samplePriorHyper(opts.priors, d, 0, rng);
  // One evaluator (one set of n×n buffers) serves every start.
  const H = opts.basis ?? null;
  if (H && H.rows !== Xm.rows) throw new InvalidInputError(`fitGp: ${Xm.rows} points but a basis of ${H.rows} rows`);
  const ev = H ? remlObjectiveEvaluator(Xm, yv, H, opts.priors, 'auto', known) : mapObjectiveEvaluator(Xm, yv, opts.priors, known);
  const count = { values: 0, gradients: 0 };
  const warm = validHyper(opts.warmStart, d) ? opts.warmStart : null;
  const results: (StartResult | null)[] = [];
  if (!warm || opts.coldStart !== false) results.push(runStart(ev, d, defaultStartHyper(d), count));
  if (warm) results.push(runStart(ev, d, warm, count));
  for (let i = 0; i < (opts.restarts ?? 0); i++) results.push(runStart(ev, d, drawStart(), count));
  for (let i = 0; i < FAILURE_RESTARTS && !bestOf(results); i++) results.push(runStart(ev, d, drawStart(), count));
  const best = bestOf(results);
  if (best) {
    try {
      if (H) {
        const bm = buildBasisModel(Xm, yv, H, best.hyper, known);
        return { model: bm.model, beta: bm.beta, objective: best.objective, fallbackReason: null, evaluations: count };
      }
      return { model: buildModel(Xm, yv, best.hyper, known), objective: best.objective, fallbackReason: null, evaluations: count };
    } catch (e) {
      if (!(e instanceof EngineError)) throw e;
    }
  }
  return { ...fallback(Xm, yv, opts, best ? 'the best start could not be factorised' : `all ${results.length} starts failed`), evaluations: count };
}

/** Prior modes with c = mean(y): the fit's last resort. Still throws NotPositiveDefinite if even that fails. */
function fallback(X: Mat, y: Float64Array, opts: GpFitOptions, reason: string): Omit<GpFitResult, 'evaluations'> {
  if (opts.basis) {
    const known = opts.knownNoise ?? null;
    const hyper = priorModeHyper(opts.priors, X.cols, 0);
    const bm = buildBasisModel(X, y, opts.basis, hyper, known);
    const objective = (restrictedLogLikelihood(X, y, opts.basis, hyper, known) + logPrior(hyper, opts.priors).value) / X.rows;
    if (!Number.isFinite(objective) || !isFiniteVec(bm.model.alpha) || !isFiniteVec(bm.beta)) {
      throw new NonFiniteError(`GP fit failed (${reason}) and the prior modes give a non-finite fit`);
    }
    return { model: bm.model, beta: bm.beta, objective, fallbackReason: `${reason}; using the prior modes` };
  }
  let c = 0;
  for (let i = 0; i < y.length; i++) c += y[i] / y.length;
  const hyper = priorModeHyper(opts.priors, X.cols, c);
  const known = opts.knownNoise ?? null;
  const m = logMarginalLikelihood(X, y, hyper, false, known);
  const objective = (m.value + logPrior(hyper, opts.priors).value) / X.rows;
  const model: GpModel = { hyper, X, y, L: m.L, alpha: m.alpha, jitter: m.jitter, ...knownField(known) };
  if (!Number.isFinite(objective) || !isFiniteVec(m.alpha)) throw new NonFiniteError(`GP fit failed (${reason}) and the prior modes give a non-finite fit`);
  return { model, objective, fallbackReason: `${reason}; using the prior modes` };
}
