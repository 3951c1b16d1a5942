/**
 * Latent-space optimisation, the template for your own generative model: find a latent vector z whose
 * decoded image a classifier calls a "2" (LATENT_CLASS=5 for a five), by maximising log p(class | x̂(z)).
 *
 * What makes this data-informed is the prior: a VAE is trained so that its latent vectors follow
 * N(0, I), so the study's prior on each of the 8 latent coordinates is exactly that, mean 0 and std 1.
 * With your own generator, put its latent prior there (the mean and std of its latent code, or
 * `"prior": {"from_points": …}` fitted to the codes of examples you like) and its decoder in
 * `logProbability`. Bounds [−3, 3] keep every point within three prior standard deviations.
 *
 *   npm run example:latent                    # starts its own server
 *   LATENT_CLASS=5 EXAMPLE_BUDGET=60 npm run example:latent
 *   PROBNES_URL=http://127.0.0.1:8080 npm run example:latent
 *
 * The decoder and classifier are the ones bench:latent uses (bench/latent: trained with TensorFlow.js
 * on the handwritten digits shipped in bench/data/digits; weights in bench/latent/weights.json).
 */
import type { StudySpec } from '../clients/typescript/src/index.js';
import { classLogProbs, decode, loadWeights } from '../bench/latent/model.js';
import { formatPoint, intFromEnv, isMain, numericPoint, runStudyExample } from './lib/server.js';

const weights = loadWeights();
export const LATENT = Array.from({ length: weights.latentDim }, (_, i) => `z${i + 1}`);

function latentVector(p: Record<string, number>): number[] {
  return LATENT.map((k) => p[k]!);
}

/** log p(class | decoder(z)): the value the study maximises (0 is a certain classification). */
export function logProbability(p: Record<string, number>, digit: number): number {
  return classLogProbs(weights, decode(weights, latentVector(p)))[digit]!;
}

/** The decoded 8×8 image in characters, darker pixels as denser glyphs. */
export function asciiDigit(p: Record<string, number>): string[] {
  const x = decode(weights, latentVector(p));
  const shades = ' .:-=+*#%@';
  return Array.from({ length: 8 }, (_, r) => x.slice(8 * r, 8 * r + 8).map((v) => shades[Math.min(9, Math.floor(v * 10))]!.repeat(2)).join(''));
}

export function latentSpec(digit: number): StudySpec {
  return {
    name: `latent-digit-${digit}`,
    direction: 'maximize',
    method: 'prob-cmaes',
    // The generator's own latent prior, N(0, I): the knowledge this study starts from.
    parameters: LATENT.map((name) => ({ name, bounds: [-3, 3] as [number, number], prior: { mean: 0, std: 1 } })),
    known_optimum: 0,
    metadata: { example: 'latent', digit },
  };
}

if (isMain(import.meta.url)) {
  const digit = intFromEnv('LATENT_CLASS', 2);
  if (digit < 0 || digit > 9) throw new RangeError('LATENT_CLASS must be a digit 0…9');
  await runStudyExample({
    spec: latentSpec(digit),
    objective: (p: Record<string, number>) => logProbability(p, digit),
    defaults: { budget: 60, workers: 3 },
    clientIdPrefix: 'latent',
    unit: 'decodings',
    report: (result) => {
      const best = result.best.observed!;
      return [
        `best value ${best.value.toFixed(4)} (log p(${digit} | image), p = ${Math.exp(best.value).toFixed(3)}) at ${formatPoint(best.parameters)}`,
        'decoded best image:',
        ...asciiDigit(numericPoint(best.parameters)).map((l) => `  |${l}|`),
      ];
    },
  });
}
