/**
 * The handwritten digits data shipped in bench/data/digits (UCI "Optical Recognition of Handwritten
 * Digits", 1,797 images of 8×8 pixels with counts 0…16, CC BY 4.0; provenance in that folder's README),
 * and the fixed split the latent-space task trains on.
 *
 * Pixels are scaled to [0, 1] (count / 16): the VAE's Bernoulli likelihood and the classifier both
 * read that scale, and the decoder's output (a sigmoid) is on it too, so the classifier sees decoded
 * images on the scale it was trained on.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { Rng } from '../../src/engine/random/index.js';

export const DIGITS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'data', 'digits', 'digits.csv.gz');
export const PIXELS = 64;
export const CLASSES = 10;
/** Seed of the train/test permutation, and the share held out for the classifier's accuracy. */
export const SPLIT_SEED = 20261126;
export const HELD_OUT = 0.2;

export interface Digits {
  /** n × 64, each pixel count / 16 in [0, 1]. */
  images: number[][];
  labels: number[];
}

/** All 1,797 rows of the shipped CSV (64 pixel counts, then the label), in file order. */
export function loadDigits(file: string = DIGITS_FILE): Digits {
  const lines = gunzipSync(readFileSync(file)).toString('utf8').trim().split('\n');
  const images: number[][] = [];
  const labels: number[] = [];
  lines.forEach((line, i) => {
    const v = line.split(',').map(Number);
    if (v.length !== PIXELS + 1 || !v.every((x) => Number.isInteger(x))) throw new Error(`${file}: line ${i + 1} is not 65 integers`);
    const label = v[PIXELS]!;
    if (label < 0 || label >= CLASSES || v.slice(0, PIXELS).some((p) => p < 0 || p > 16)) throw new Error(`${file}: line ${i + 1} out of range`);
    images.push(v.slice(0, PIXELS).map((p) => p / 16));
    labels.push(label);
  });
  return { images, labels };
}

/** A seeded permutation split: the first 80 % train the models, the rest measure the classifier. */
export function splitDigits(all: Digits, seed: number = SPLIT_SEED): { train: Digits; test: Digits } {
  const n = all.labels.length;
  const order = Array.from({ length: n }, (_, i) => i);
  const rng = Rng.fromSeed(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const nTest = Math.round(n * HELD_OUT);
  const pick = (idx: number[]): Digits => ({ images: idx.map((i) => all.images[i]!), labels: idx.map((i) => all.labels[i]!) });
  return { train: pick(order.slice(nTest)), test: pick(order.slice(0, nTest)) };
}
