/**
 * Calibration of a fitted GP's predictive uncertainty by leave-one-out (Rasmussen & Williams 2006,
 * §5.4.2). With K = c²·K̃ (kernel and noise scaled together), the leave-one-out predictive log
 * probability Σ_i log p(y_i | y_−i) is maximised in c² at
 *   c² = (1/n) Σ_i α_i² / [K⁻¹]_ii,   α = K⁻¹ r,                                         (R&W eq. 5.11)
 * computed here at the fitted K (so c = 1 when the fit's own scale already predicts its held-out
 * points as well as it claims): (α_i/[K⁻¹]_ii) is y_i minus its leave-one-out mean and 1/[K⁻¹]_ii its
 * leave-one-out variance (R&W eq. 5.12), so c² is the mean squared standardised leave-one-out residual.
 * Scaling K by c² leaves the posterior mean unchanged and multiplies every posterior variance by c².
 *
 * For a GP with a basis mean fitted by GLS (reml.ts) this is applied to the residual GP (r = y − Hβ̂,
 * β̂ held fixed): refitting β without point i would widen each leave-one-out variance (R&W eq. 2.42),
 * so c is then slightly larger than the GLS-aware value, i.e. on the conservative side.
 */
import { cholInverseSymInto } from '../linalg/index.js';
import type { GpModel } from './types.js';

/** c = √((1/n) Σ_i α_i²/[K⁻¹]_ii) of a fitted model (1 for an empty one). */
export function looScale(model: GpModel): number {
  const n = model.X.rows;
  if (n === 0) return 1;
  const Kinv = new Float64Array(n * n);
  cholInverseSymInto(model.L.data, n, Kinv, new Float64Array(n * n));
  let s = 0;
  for (let i = 0; i < n; i++) s += (model.alpha[i] * model.alpha[i]) / Kinv[i * n + i];
  const c = Math.sqrt(s / n);
  return Number.isFinite(c) && c > 0 ? c : 1;
}
