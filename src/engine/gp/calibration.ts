/**
 * Calibration of a fitted GP's predictive uncertainty.
 *
 * 1. The uncertainty of the basis coefficients (GP with explicit basis functions, reml.ts). The residual
 *    GP's posterior variance treats β̂ as known; with a vague prior on β the predictive variance at x*
 *    has the extra term (Rasmussen & Williams 2006, eq. 2.42, vague limit)
 *      Rᵀ (Hᵀ K⁻¹ H)⁻¹ R,   R = h(x*) − Hᵀ K⁻¹ k(X, x*),
 *    the variance of h(x*)ᵀβ̂ − (the part of it the residual GP's mean already corrects). With a quadratic
 *    basis fitted on n ≈ 1.5·p points this term can exceed the residual variance many times over.
 *
 * 2. The overall scale by leave-one-out (R&W 2006, §5.4.2). With K = c²·K̃ (kernel and noise scaled
 *    together) the leave-one-out predictive log probability is maximised in c² at
 *      c² = (1/n) Σ_i e_i² / v_i,
 *    e_i and v_i the leave-one-out residual and variance (R&W eq. 5.11–5.12): e_i = α_i/[K⁻¹]_ii and
 *    v_i = 1/[K⁻¹]_ii for a GP with a known mean, so c² = (1/n) Σ α_i²/[K⁻¹]_ii. With a basis whose
 *    β is re-estimated without point i, K⁻¹ becomes P = K⁻¹ − K⁻¹H(HᵀK⁻¹H)⁻¹HᵀK⁻¹ (Pz = α, since
 *    Hᵀα = 0 for the GLS residual): c² = (1/n) Σ α_i²/P_ii. Holding β fixed instead would use [K⁻¹]_ii and
 *    understate the residuals by about (n − p)/n (the p degrees of freedom β̂ absorbed). c = 1 when the
 *    fit's own scale predicts its held-out points as well as it claims; scaling K by c² leaves the
 *    posterior mean unchanged and multiplies every posterior variance by c².
 */
import { type Mat, cholesky, cholInverseSymInto, solveLower, zeros } from '../linalg/index.js';
import { rbfCross } from './kernel.js';
import type { GpModel } from './types.js';

/** c of a fitted model: with `H` (n×p, the basis at the data) the GLS-aware P, otherwise K⁻¹. 1 for an empty model. */
export function looScale(model: GpModel, H: Mat | null = null): number {
  const n = model.X.rows;
  if (n === 0) return 1;
  const Kinv = new Float64Array(n * n);
  cholInverseSymInto(model.L.data, n, Kinv, new Float64Array(n * n));
  const diag = Float64Array.from({ length: n }, (_, i) => Kinv[i * n + i]);
  if (H && H.cols > 0) {
    // P_ii = [K⁻¹]_ii − ‖L_M⁻¹ (HᵀK⁻¹)_{:,i}‖², M = HᵀK⁻¹H.
    const p = H.cols;
    const B = zeros(p, n); // HᵀK⁻¹
    for (let a = 0; a < p; a++) for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += H.data[j * p + a] * Kinv[j * n + i];
      B.data[a * n + i] = s;
    }
    const M = zeros(p, p);
    for (let a = 0; a < p; a++) for (let b = 0; b <= a; b++) {
      let s = 0;
      for (let i = 0; i < n; i++) s += B.data[a * n + i] * H.data[i * p + b];
      M.data[a * p + b] = s;
      M.data[b * p + a] = s;
    }
    const LM = cholesky(M).L;
    for (let i = 0; i < n; i++) {
      const w = solveLower(LM, Float64Array.from({ length: p }, (_, a) => B.data[a * n + i]));
      let q = 0;
      for (let a = 0; a < p; a++) q += w[a] * w[a];
      diag[i] -= q;
    }
  }
  let s = 0;
  for (let i = 0; i < n; i++) s += (model.alpha[i] * model.alpha[i]) / diag[i];
  const c = Math.sqrt(s / n);
  return Number.isFinite(c) && c > 0 ? c : 1;
}

/**
 * Rᵀ(HᵀK⁻¹H)⁻¹R at each of m points Xs (m×d) with basis features Hs (m×p), for the residual GP `model`
 * fitted with basis H (n×p) at its data: the variance the basis coefficients' uncertainty adds to the
 * residual GP's predictive variance (R&W eq. 2.42).
 */
export function basisVariance(model: GpModel, H: Mat, Xs: Mat, Hs: Mat): Float64Array {
  const n = model.X.rows, p = H.cols, m = Xs.rows;
  const V = zeros(n, p); // L⁻¹H, column by column
  for (let a = 0; a < p; a++) {
    const col = solveLower(model.L, Float64Array.from({ length: n }, (_, i) => H.data[i * p + a]));
    for (let i = 0; i < n; i++) V.data[i * p + a] = col[i];
  }
  const M = zeros(p, p); // HᵀK⁻¹H = VᵀV
  for (let a = 0; a < p; a++) for (let b = 0; b <= a; b++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += V.data[i * p + a] * V.data[i * p + b];
    M.data[a * p + b] = s;
    M.data[b * p + a] = s;
  }
  const LM = cholesky(M).L;
  const Ks = rbfCross(model.X, Xs, model.hyper); // n×m
  const out = new Float64Array(m);
  for (let j = 0; j < m; j++) {
    const w = solveLower(model.L, Float64Array.from({ length: n }, (_, i) => Ks.data[i * m + j])); // L⁻¹k*
    const R = Float64Array.from({ length: p }, (_, a) => {
      let s = 0;
      for (let i = 0; i < n; i++) s += V.data[i * p + a] * w[i];
      return Hs.data[j * p + a] - s;
    });
    const z = solveLower(LM, R);
    let q = 0;
    for (let a = 0; a < p; a++) q += z[a] * z[a];
    out[j] = q;
  }
  return out;
}

/**
 * One post-decision residual (docs/ALGORITHM.md §28): a value observed at a point the search chose with a
 * model, against that model's prediction there made before the value was known, in y units: r = y − m̂(x),
 * sd the prediction's latent standard deviation, noise the observation noise's standard deviation (the
 * model's σ_n, with a reported stderr added in quadrature).
 */
export interface Surprise {
  r: number;
  sd: number;
  noise: number;
}

/** Residuals needed before the estimate is corrected. */
export const SURPRISE_MIN = 3;

/**
 * 3. The optimism of a chosen point (the "optimizer's curse", Smith & Winkler 2006). The search moves μ to
 *    where the model is low, and with noisy data the model is low partly where its error is: at the chosen
 *    point, y − m̂ has a positive mean that the posterior, which treats the point as fixed, does not know.
 *    The model below describes the residuals of values observed at earlier chosen points (each predicted
 *    before its value was known, so out of sample, and chosen by the same rule):
 *      r_t = κ·σ_t + e_t,   e_t ~ N(0, c²(σ_t² + s_t²)),
 *    an optimism of κ latent standard deviations and the predictive variance scaled by c² (σ_t the
 *    prediction's latent standard deviation, s_t the noise's). κ by weighted least squares with
 *    w_t = 1/(σ_t² + s_t²) over the m residuals,
 *      κ̂ = Σ w r σ / Σ w σ²,   Var κ̂ = c²/Σ w σ²,
 *    and c² = max(1, Σ w (r − κ̂σ)²/(m − 1)) (never narrower than the model says). The latent value at the
 *    new point is then m̂ + κ̂σ with standard deviation σ·c·√(1 + 1/Σ w σ²) (its own error and κ̂'s). Null
 *    (no correction) with fewer than SURPRISE_MIN usable residuals.
 */
export function surpriseCorrection(residuals: readonly Surprise[]): { kappa: number; scale2: number; kappaVar: number } | null {
  const ok = residuals.filter((s) => Number.isFinite(s.r) && s.sd > 0 && Number.isFinite(s.sd) && s.noise >= 0 && Number.isFinite(s.noise));
  if (ok.length < SURPRISE_MIN) return null;
  let sww = 0, swr = 0;
  const w = ok.map((s) => 1 / (s.sd * s.sd + s.noise * s.noise));
  ok.forEach((s, t) => {
    sww += w[t] * s.sd * s.sd;
    swr += w[t] * s.r * s.sd;
  });
  const kappa = swr / sww;
  let q = 0;
  ok.forEach((s, t) => (q += w[t] * (s.r - kappa * s.sd) ** 2));
  const scale2 = Math.max(1, q / (ok.length - 1));
  const out = { kappa, scale2, kappaVar: scale2 / sww };
  return Object.values(out).every(Number.isFinite) ? out : null;
}

/** The prediction (mean, latent sd) at a chosen point corrected by the residuals of earlier chosen points (3. above). */
export function correctForSurprise(predicted: number, sd: number, residuals: readonly Surprise[]): { predicted: number; sd: number } {
  const c = surpriseCorrection(residuals);
  if (!c) return { predicted, sd };
  return { predicted: predicted + c.kappa * sd, sd: sd * Math.sqrt(c.scale2 + c.kappaVar) };
}
