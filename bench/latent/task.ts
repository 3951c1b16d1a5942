/**
 * The paper's latent-space optimisation task (its §5.3 and appendix "Latent Space Optimisation"),
 * rebuilt on the handwritten digits shipped in bench/data/digits: find a latent vector z whose
 * decoded image a classifier assigns to class c (the digits 2 and 5, as in the paper's MNIST task).
 *
 *   f_c(z) = −log p(c | x̂(z)),   z ∈ R^d, prior N(0, I) (the VAE's own latent prior), minimised
 *
 * with x̂ the VAE decoder's mean image and p the classifier's softmax (model.ts, weights trained by
 * bench/latent/train.ts). f_c ≥ 0 and f_c → 0 as p(c | x̂(z)) → 1, so f* = 0 is the infimum used for
 * regret (regret = −log p(c | x̂(z)) itself). The paper scores Σ_i w_i p_i with w_i = exp(−2(i − c)²);
 * the log-probability is used here because it keeps improving where a probability saturates at 1.
 * Bounds [−3, 3]^d (three prior standard deviations, the paper's box for BO and πBO).
 */
import type { Benchmark, BenchmarkDef } from '../../src/engine/benchmarks/index.js';
import { classLogProbs, decode, loadWeights, type LatentWeights } from './model.js';

export const LATENT_CLASSES = [2, 5] as const;

let cached: LatentWeights | null = null;
function weights(): LatentWeights {
  cached ??= loadWeights();
  return cached;
}

/** −log p(c | x̂(z)): the objective of class c at z. */
export function latentObjective(c: number, z: readonly number[], w: LatentWeights = weights()): number {
  if (z.length !== w.latentDim) throw new RangeError(`latent-digit-${c}: expected a point of dimension ${w.latentDim}, got ${z.length}`);
  return -classLogProbs(w, decode(w, z))[c]!;
}

function latentTask(c: number): BenchmarkDef {
  const name = `latent-digit-${c}`;
  return {
    name,
    dim: 8,
    defaultDim: 8,
    make(d: number): Benchmark {
      const w = weights();
      if (d !== w.latentDim) throw new RangeError(`${name} is ${w.latentDim}-dimensional, not ${d}-dimensional`);
      return {
        name,
        dim: d,
        f: (z) => latentObjective(c, z, w),
        optimum: 0,
        argmin: null,
        bounds: { lower: Array(d).fill(-3), upper: Array(d).fill(3) },
        prior: { mean: Array(d).fill(0), std: Array(d).fill(1) },
        source: `−log p(${c} | decoder(z)): VAE decoder and classifier trained on the UCI handwritten digits (bench/latent/weights.json), prior N(0, I)`,
      };
    },
  };
}

export const LATENT_TASKS: readonly BenchmarkDef[] = LATENT_CLASSES.map(latentTask);
