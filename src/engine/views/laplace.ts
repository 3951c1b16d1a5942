/**
 * Uncertainty of the MAP GP hyperparameters by the Laplace approximation (MacKay 1992; Rasmussen &
 * Williams 2006 §5.2): around the MAP φ̂ the posterior of φ = [log ℓ, log s, ρ, c] is approximately
 * N(φ̂, H⁻¹) with H = −∇² log p(φ | y) the Hessian of the negated log posterior at φ̂.
 *
 * Glossary: d dimension, n points, φ (d + 3) as in gp/mll.ts. The MAP objective there is
 * (mll + Σ log priors)/n, so H = −n·∇²(objective); the Hessian is taken by central differences of
 * the analytic gradient (2(d + 3) gradients, each O(n³)), then symmetrised.
 *
 * When H is not positive definite at the given φ (a flat direction: e.g. the noise at its floor with
 * noiseless data, or hyperparameters warm-started away from the exact optimum) the joint inverse
 * does not exist; the covariance of log ℓ is then the conditional one, (H_ℓℓ)⁻¹, which holds s, σ²_n
 * and c at their values and is narrower. `kind` says which was used; null when neither exists.
 */
import { type GpHyper, type GpPriors, mapObjectiveEvaluator, packHyper, toMat } from '../gp/index.js';
import { cholInverseSym, fromRows, isFiniteMat, symmetrize, toRows, tryCholesky, zeros } from '../linalg/index.js';

export interface LengthscaleCovariance {
  /** Covariance of log ℓ (d×d) under the Laplace approximation, or null when H is not PD. */
  cov: number[][] | null;
  kind: 'joint' | 'conditional' | null;
}

/** Step of the central differences in φ (log units): the gradient is analytic, so h² error ≈ 1e-8. */
const STEP = 1e-4;

export function lengthscaleCovariance(X: number[][], targets: number[], hyper: GpHyper, priors: GpPriors): LengthscaleCovariance {
  const d = hyper.lengthscales.length;
  const n = X.length;
  const p = d + 3;
  const ev = mapObjectiveEvaluator(toMat(X), targets, priors);
  const phi = packHyper(hyper);
  const gradAt = (k: number, h: number): Float64Array | null => {
    const q = Float64Array.from(phi);
    q[k] += h;
    try {
      if (!Number.isFinite(ev.value(q))) return null;
      return ev.gradient();
    } catch {
      return null; // the kernel matrix cannot be factorised one step away: no curvature there
    }
  };
  const G = zeros(p, p);
  for (let k = 0; k < p; k++) {
    const up = gradAt(k, STEP);
    const down = gradAt(k, -STEP);
    if (!up || !down) return { cov: null, kind: null };
    for (let j = 0; j < p; j++) G.data[k * p + j] = (-n * (up[j] - down[j])) / (2 * STEP);
  }
  const H = symmetrize(G);
  if (!isFiniteMat(H)) return { cov: null, kind: null };

  const Lfull = tryCholesky(H);
  if (Lfull) {
    const full = toRows(cholInverseSym(Lfull));
    return { cov: full.slice(0, d).map((row) => row.slice(0, d)), kind: 'joint' };
  }
  const Lll = tryCholesky(fromRows(toRows(H).slice(0, d).map((row) => row.slice(0, d))));
  if (Lll) return { cov: toRows(cholInverseSym(Lll)), kind: 'conditional' };
  return { cov: null, kind: null };
}
