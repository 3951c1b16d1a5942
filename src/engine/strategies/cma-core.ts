/**
 * The CMA-ES core that CMA-ES (cmaes.ts), CatCMA (catcma.ts) and lq-CMA-ES (lq-cmaes.ts) share: the
 * parameters and state, Table 1's strategy parameters, the start, sampling and one update, after
 * N. Hansen, "The CMA Evolution Strategy: A Tutorial", arXiv:1604.00772 (v2), Appendix A; equation
 * numbers "(n)" are the tutorial's and the glossary is cmaes.ts's. Apart from cmaes.ts so that the
 * strategies import it without importing one another.
 */
import { InvalidInputError, NonFiniteError } from '../errors.js';
import type { Rng } from '../random/index.js';
import { fromRows, symEig } from '../linalg/index.js';
import type { BaseState, InitSpec } from './types.js';
import { positiveOption, assertFinite, assertFiniteRows, checkDim, identityRows, zerosVec } from './es-utils.js';
import type { Options, OptionSpecs } from './options.js';

/** σ is capped here (as CyberAgentAILab/cmaes does): beyond it the search is meaningless in whitened units. */
const SIGMA_MAX = 1e32;
/** The update ranks a generation's points: one point alone carries no ranking. */
export const CMA_MIN_BATCH = 2;

/** CMA-ES's parameters, resolved once at init: σ₀ and whether the update is active (negative weights). */
export interface CmaParams {
  readonly sigma0: number;
  readonly active: boolean;
}

/** The parameters for `options` (sigma0 defaults to 1, active to true). */
export function cmaParams(options: Options): CmaParams {
  return Object.freeze({ sigma0: positiveOption(options, 'sigma0', 1), active: options.active !== false });
}

export interface CmaesState extends BaseState {
  method: 'cmaes';
  params: CmaParams;
  sigma: number;
  C: number[][];
  p_sigma: number[];
  p_c: number[];
  /** Points handed out since the last tell, to tell genuine samples from injected ones. */
  asked: number[][];
  /** With categorical parameters (CatCMA, catcma.ts): ASNG's step-size state; absent otherwise. */
  asng?: AsngState;
}

/** ASNG's state (Akimoto et al. 2019): the step's scale Δ, the accumulated (normalised) gradient s and its normaliser γ. */
export interface AsngState {
  Delta: number;
  gamma: number;
  s: number[];
}

/** The static strategy parameters of Table 1 for dimension n and population λ. */
export interface CmaParameters {
  lambda: number;
  mu: number;
  /** w_1 … w_λ, best first; the last λ − μ are ≤ 0 (zero when `active` is off). */
  weights: number[];
  mueff: number;
  cm: number;
  cSigma: number;
  dSigma: number;
  cc: number;
  c1: number;
  cmu: number;
  /** E‖N(0, I)‖ ≈ √n (1 − 1/(4n) + 1/(21n²)). */
  chiN: number;
}

export function cmaParameters(n: number, lambda: number, active = true): CmaParameters {
  if (!Number.isInteger(lambda) || lambda < 2) throw new InvalidInputError(`CMA-ES needs λ ≥ 2, got ${lambda}`);
  const mu = Math.floor(lambda / 2);
  // (49) preliminary weights w'_i = ln((λ+1)/2) − ln i, i = 1…λ: positive for i ≤ μ, ≤ 0 after.
  const wPrime = Array.from({ length: lambda }, (_, i) => Math.log((lambda + 1) / 2) - Math.log(i + 1));
  const pos = wPrime.slice(0, mu);
  const neg = wPrime.slice(mu);
  const sum = (a: number[]): number => a.reduce((s, v) => s + v, 0);
  const sumSq = (a: number[]): number => a.reduce((s, v) => s + v * v, 0);
  const mueff = sum(pos) ** 2 / sumSq(pos); // μ_eff = (Σ w'⁺)² / Σ (w'⁺)², ≥ 1 (= 1 for λ = 2, 3)
  const mueffMinus = sum(neg) ** 2 / sumSq(neg);
  const alphaCov = 2;
  const c1 = alphaCov / ((n + 1.3) ** 2 + mueff); // (57)
  // (58) with the ¼ term of pycma's default, α_cov(¼ + μ_eff + 1/μ_eff − 2): without it c_μ = 0
  // whenever μ_eff = 1 (λ = 2, 3), which would switch off the rank-μ update (and divide by 0 in (50)).
  const cmu = Math.min(1 - c1, (alphaCov * (0.25 + mueff + 1 / mueff - 2)) / ((n + 2) ** 2 + (alphaCov * mueff) / 2));
  const alphaMuMinus = 1 + c1 / cmu; // (50)
  const alphaMueffMinus = 1 + (2 * mueffMinus) / (mueff + 2); // (51)
  const alphaPosdefMinus = (1 - c1 - cmu) / (n * cmu); // (52) keeps C positive definite
  const alphaMin = Math.min(alphaMuMinus, alphaMueffMinus, alphaPosdefMinus);
  const posSum = sum(wPrime.filter((w) => w >= 0));
  const negSum = -sum(wPrime.filter((w) => w < 0));
  // (53): positive weights sum to 1, negative ones to −min(α_μ⁻, α_μeff⁻, α_posdef⁻).
  const weights = wPrime.map((w) => (w >= 0 ? w / posSum : active ? (alphaMin * w) / negSum : 0));
  const cSigma = (mueff + 2) / (n + mueff + 5); // (55)
  const dSigma = 1 + 2 * Math.max(0, Math.sqrt((mueff - 1) / (n + 1)) - 1) + cSigma; // (55)
  const cc = (4 + mueff / n) / (n + 4 + (2 * mueff) / n); // (56)
  const chiN = Math.sqrt(n) * (1 - 1 / (4 * n) + 1 / (21 * n * n));
  return { lambda, mu, weights, mueff, cm: 1 /* (54) */, cSigma, dSigma, cc, c1, cmu, chiN };
}

/** B and D with C = B D² Bᵀ; D is floored so C^{-1/2} stays finite if round-off made an eigenvalue ≤ 0. */
function eigenBasis(C: number[][]): { B: Float64Array; D: Float64Array } {
  const { values, vectors } = symEig(fromRows(C));
  const lmax = Math.max(values[values.length - 1], 0);
  const floor = lmax > 0 ? 1e-300 + 1e-20 * lmax : 1e-300;
  return { B: vectors.data, D: values.map((l) => Math.sqrt(Math.max(l, floor))) };
}

/** B·diag(s)·Bᵀ·v, i.e. C^{1/2} v for s = D and C^{-1/2} v for s = 1/D. */
function applySym(B: Float64Array, s: ArrayLike<number>, v: ArrayLike<number>): number[] {
  const n = s.length;
  const t = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    let acc = 0;
    for (let i = 0; i < n; i++) acc += B[i * n + j] * v[i];
    t[j] = acc * s[j];
  }
  const out = zerosVec(n);
  for (let i = 0; i < n; i++) {
    let acc = 0;
    for (let j = 0; j < n; j++) acc += B[i * n + j] * t[j];
    out[i] = acc;
  }
  return out;
}

const norm = (v: readonly number[]): number => Math.sqrt(v.reduce((s, a) => s + a * a, 0));
const covOf = (sigma: number, C: number[][]): number[][] => C.map((row) => row.map((c) => sigma * sigma * c));

/** σ₀ (option `sigma0`), C₀ = I, m₀ = 0 (the prior mean in whitened coordinates, ALGORITHM.md §0), zero paths. */
export function cmaStart(spec: InitSpec, method: string, params: CmaParams): Pick<CmaesState, 'mean' | 'cov' | 'sigma' | 'C' | 'p_sigma' | 'p_c'> {
  checkDim(spec.dim, spec.batchSize, method, CMA_MIN_BATCH);
  const d = spec.dim;
  const sigma = params.sigma0;
  if (sigma > SIGMA_MAX) throw new InvalidInputError(`${method}: sigma0 must be ≤ ${SIGMA_MAX}`);
  const C = identityRows(d);
  return { mean: zerosVec(d), cov: covOf(sigma, C), sigma, C, p_sigma: zerosVec(d), p_c: zerosVec(d) };
}

/** The CMA-ES part of a state: what sampling and one update read (lq-CMA-ES shares it). */
export interface CmaCore {
  dim: number;
  mean: number[];
  sigma: number;
  C: number[][];
  p_sigma: number[];
  p_c: number[];
  params: Pick<CmaParams, 'active'>;
}

/** What one update writes. */
export type CmaStep = Pick<CmaesState, 'mean' | 'sigma' | 'C' | 'cov' | 'p_sigma' | 'p_c'>;

/** `count` samples x = m + σ B D z, z ~ N(0, I) (tutorial (38)–(40)); advances `rng`. */
export function cmaSample(core: CmaCore, rng: Rng, count: number): number[][] {
  const { B, D } = eigenBasis(core.C);
  const n = core.dim;
  const points: number[][] = [];
  for (let k = 0; k < count; k++) {
    // (38)–(40): z ~ N(0, I), y = B D z ~ N(0, C), x = m + σ y. B D z is computed as B (D ⊙ z).
    const z = rng.normals(n);
    const x = core.mean.slice();
    for (let i = 0; i < n; i++) {
      let y = 0;
      for (let j = 0; j < n; j++) y += B[i * n + j] * D[j] * z[j];
      x[i] += core.sigma * y;
    }
    assertFinite(x, 'cmaes: sampled point');
    points.push(x);
  }
  return points;
}

/**
 * One CMA-ES update, (41)–(47), from λ' = `ranked.length` ≥ 2 points ranked best first. `injected[i]`
 * marks a point that is not a sample of this generation's N(m, σ²C) (projected, external, a model
 * optimum): its Mahalanobis length is clipped to √n + 2n/(n+2) (Hansen 2011, arXiv:1110.4181).
 * `g` is the number of updates before this one (the bias correction of h_σ).
 */
export function cmaUpdate(state: CmaCore, ranked: readonly number[][], injected: readonly boolean[], g: number): CmaStep {
  const n = state.dim;
  const p = cmaParameters(n, ranked.length, state.params.active);
  const { B, D } = eigenBasis(state.C);
  const invD = D.map((v) => 1 / v);
  const { mean: m, sigma } = state;
  const cy = Math.sqrt(n) + (2 * n) / (n + 2);

  // y_{i:λ} = (x_{i:λ} − m)/σ, best first; injected points are clipped to ‖C^{-1/2} y‖ ≤ c_y.
  const ys = ranked.map((x, k) => {
    const y = x.map((xi, i) => (xi - m[i]) / sigma);
    if (!injected[k]) return y;
    const len = norm(applySym(B, invD, y));
    return len > cy ? y.map((v) => (v * cy) / len) : y;
  });

  // (41)–(42): ⟨y⟩_w = Σ_{i≤μ} w_i y_{i:λ}, m ← m + c_m σ ⟨y⟩_w.
  const yw = zerosVec(n);
  for (let i = 0; i < p.mu; i++) for (let j = 0; j < n; j++) yw[j] += p.weights[i] * ys[i][j];
  const mean = m.map((mj, j) => mj + p.cm * sigma * yw[j]);

  // (43): p_σ ← (1 − c_σ) p_σ + √(c_σ(2 − c_σ) μ_eff) C^{-1/2} ⟨y⟩_w.
  const invSqrtCyw = applySym(B, invD, yw);
  const cSig = Math.sqrt(p.cSigma * (2 - p.cSigma) * p.mueff);
  const pSigma = state.p_sigma.map((v, j) => (1 - p.cSigma) * v + cSig * invSqrtCyw[j]);
  const pSigmaNorm = norm(pSigma);
  // (44): σ ← σ exp((c_σ/d_σ)(‖p_σ‖/E‖N(0,I)‖ − 1)).
  const newSigma = Math.min(sigma * Math.exp((p.cSigma / p.dSigma) * (pSigmaNorm / p.chiN - 1)), SIGMA_MAX);

  // h_σ (the Heaviside function defined with (45)): stall the p_c update while ‖p_σ‖ is large, i.e.
  // while σ is increasing fast, so that C does not grow too quickly in linear surroundings.
  // g + 1 updates have been accumulated into p_σ, hence the bias correction 1 − (1 − c_σ)^{2(g+1)}.
  const g1 = g + 1;
  const hSigma = pSigmaNorm / Math.sqrt(1 - (1 - p.cSigma) ** (2 * g1)) < (1.4 + 2 / (n + 1)) * p.chiN ? 1 : 0;
  // (45): p_c ← (1 − c_c) p_c + h_σ √(c_c(2 − c_c) μ_eff) ⟨y⟩_w.
  const cC = Math.sqrt(p.cc * (2 - p.cc) * p.mueff);
  const pc = state.p_c.map((v, j) => (1 - p.cc) * v + hSigma * cC * yw[j]);

  // (46): w°_i = w_i for w_i ≥ 0, else w_i · n / ‖C^{-1/2} y_{i:λ}‖² (negative steps normalised to length √n).
  const wCirc = p.weights.map((w, i) => {
    if (w >= 0) return w;
    const len2 = norm(applySym(B, invD, ys[i])) ** 2;
    return len2 > 0 ? (w * n) / len2 : 0; // y = 0 contributes nothing whatever its weight
  });
  // (47): C ← (1 + c_1 δ(h_σ) − c_1 − c_μ Σ w_j) C + c_1 p_c p_cᵀ + c_μ Σ w°_i y_i y_iᵀ, where
  // δ(h_σ) = (1 − h_σ) c_c (2 − c_c) ≤ 1 restores the variance the stalled p_c did not add.
  const delta = (1 - hSigma) * p.cc * (2 - p.cc);
  const sumW = p.weights.reduce((s, w) => s + w, 0);
  const keep = 1 + p.c1 * delta - p.c1 - p.cmu * sumW;
  const C = state.C.map((row, a) => row.map((c, b) => keep * c + p.c1 * pc[a] * pc[b]));
  ys.forEach((y, i) => {
    if (wCirc[i] === 0) return;
    const f = p.cmu * wCirc[i];
    for (let a = 0; a < n; a++) for (let b = 0; b < n; b++) C[a][b] += f * y[a] * y[b];
  });
  // Symmetrise (ALGORITHM.md §8) so that round-off never makes C asymmetric over many generations.
  for (let a = 0; a < n; a++) for (let b = 0; b < a; b++) C[a][b] = C[b][a] = 0.5 * (C[a][b] + C[b][a]);

  assertFinite(mean, 'cmaes: mean');
  assertFinite(pSigma, 'cmaes: p_sigma');
  assertFinite(pc, 'cmaes: p_c');
  assertFiniteRows(C, 'cmaes: C');
  if (!(newSigma > 0) || !Number.isFinite(newSigma)) throw new NonFiniteError(`cmaes: sigma became ${newSigma}`);
  return { mean, sigma: newSigma, C, cov: covOf(newSigma, C), p_sigma: pSigma, p_c: pc };
}

/** The options of CMA-ES (lq-CMA-ES adds its own). */
export const CMA_OPTIONS: OptionSpecs = {
  sigma0: { kind: 'number', min: 0, max: 1e3, exclusiveMin: true, description: 'Initial step size σ₀ in whitened units (the prior has unit scale).' },
  active: { kind: 'boolean', description: 'Active CMA: negative weights for the worst samples in the rank-μ update.' },
};

