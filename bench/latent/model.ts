/**
 * The latent-space task's two trained networks as plain arrays, and their forward passes.
 *
 * Glossary: z = latent vector (d = LATENT_DIM), prior N(0, I); x = image, 64 pixels in [0, 1].
 *   decoder     x̂(z) = σ(W₂ relu(W₁ z + b₁) + b₂)                    (the VAE's Bernoulli mean)
 *   classifier  log p(·|x) = log softmax(V₂ relu(V₁ x + c₁) + c₂)
 * Weights are stored as TensorFlow.js keeps a dense layer's kernel: in × out, row-major, so that
 * y = x·K + b. bench/latent/train.ts trains both with TensorFlow.js and writes weights.json; the
 * passes below read that file and agree with TensorFlow.js's own `predict` (test/bench/latent.test.ts).
 * They are written out here rather than calling TensorFlow.js so that an evaluation is a few
 * microseconds in a benchmark worker and needs no TensorFlow.js at run time.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const WEIGHTS_FILE = join(dirname(fileURLToPath(import.meta.url)), 'weights.json');

/** One dense layer: kernel (in × out, row-major) and bias (out). */
export interface Dense {
  in: number;
  out: number;
  kernel: number[];
  bias: number[];
}

export interface LatentWeights {
  latentDim: number;
  /** Decoder: latent → hidden (relu) → 64 logits (sigmoid). */
  decoder: [Dense, Dense];
  /** Classifier: 64 pixels → hidden (relu) → 10 logits (softmax). */
  classifier: [Dense, Dense];
  /** How the weights were made: seed, epochs, losses, held-out accuracy, library versions. */
  training: Record<string, unknown>;
}

export function loadWeights(file: string = WEIGHTS_FILE): LatentWeights {
  return JSON.parse(readFileSync(file, 'utf8')) as LatentWeights;
}

function dense(layer: Dense, x: readonly number[], relu: boolean): number[] {
  if (x.length !== layer.in) throw new RangeError(`dense layer expects ${layer.in} inputs, got ${x.length}`);
  const y = layer.bias.slice();
  for (let i = 0; i < layer.in; i++) {
    const xi = x[i]!;
    if (xi === 0) continue;
    const row = i * layer.out;
    for (let j = 0; j < layer.out; j++) y[j]! += xi * layer.kernel[row + j]!;
  }
  return relu ? y.map((v) => (v > 0 ? v : 0)) : y;
}

/** The decoded image x̂(z): the Bernoulli mean of every pixel, in [0, 1]. */
export function decode(w: LatentWeights, z: readonly number[]): number[] {
  const logits = dense(w.decoder[1], dense(w.decoder[0], z, true), false);
  return logits.map((t) => 1 / (1 + Math.exp(-t)));
}

/** log p(k | x) for k = 0…9, by a log-sum-exp that cannot overflow. */
export function classLogProbs(w: LatentWeights, x: readonly number[]): number[] {
  const logits = dense(w.classifier[1], dense(w.classifier[0], x, true), false);
  const m = Math.max(...logits);
  const lse = m + Math.log(logits.reduce((s, t) => s + Math.exp(t - m), 0));
  return logits.map((t) => t - lse);
}
