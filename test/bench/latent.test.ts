/**
 * The latent-space task (bench/latent): the shipped data is what its README says, the objective is
 * −log p(c | decoder(z)) as bench/latent/task.ts documents it (checked against TensorFlow.js's own
 * forward pass of the same weights), the committed weights' recorded held-out accuracy is what they
 * give, and training is reproducible from its seed (a reduced model trained twice).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import * as tf from '@tensorflow/tfjs';
import { describe, expect, it } from 'vitest';
import { DIGITS_FILE, loadDigits, splitDigits } from '../../bench/latent/data.js';
import { classLogProbs, decode, loadWeights, type Dense, type LatentWeights } from '../../bench/latent/model.js';
import { LATENT_TASKS, latentObjective } from '../../bench/latent/task.js';
import { trainLatentModels } from '../../bench/latent/train.js';
import { Rng } from '../../src/engine/random/index.js';

const weights = loadWeights();

/** A TensorFlow.js dense layer carrying the stored kernel and bias. */
function tfDense(layer: Dense, activation: 'relu' | 'sigmoid' | 'linear', first: boolean): tf.layers.Layer {
  const l = tf.layers.dense({ units: layer.out, activation, ...(first ? { inputShape: [layer.in] } : {}) });
  return l;
}

function tfModel(layers: readonly [Dense, Dense], outActivation: 'sigmoid' | 'linear'): tf.Sequential {
  const m = tf.sequential({ layers: [tfDense(layers[0], 'relu', true), tfDense(layers[1], outActivation, false)] });
  m.layers.forEach((l, i) => l.setWeights([tf.tensor2d(layers[i]!.kernel, [layers[i]!.in, layers[i]!.out]), tf.tensor1d(layers[i]!.bias)]));
  return m;
}

describe('the shipped digits data', () => {
  it('is the file whose checksum bench/data/digits/README.md gives, with the UCI test set\'s class counts', () => {
    const sha = createHash('sha256').update(readFileSync(DIGITS_FILE)).digest('hex');
    expect(readFileSync(new URL('../../bench/data/digits/README.md', import.meta.url), 'utf8')).toContain(sha);
    const { images, labels } = loadDigits();
    expect(images.length).toBe(1797);
    expect(images.every((x) => x.length === 64 && x.every((v) => v >= 0 && v <= 1))).toBe(true);
    // optdigits.names (UCI): class distribution of optdigits.tes, the 1,797 images scikit-learn ships.
    const counts = Array.from({ length: 10 }, (_, k) => labels.filter((l) => l === k).length);
    expect(counts).toEqual([178, 182, 177, 183, 181, 182, 181, 179, 174, 180]);
  });

  it('splits by a seeded permutation: disjoint, complete, 20 % held out, the same every time', () => {
    const all = loadDigits();
    const a = splitDigits(all);
    const b = splitDigits(all);
    expect(a.test.labels.length).toBe(359);
    expect(a.train.labels.length + a.test.labels.length).toBe(1797);
    expect(a.test.images).toEqual(b.test.images);
    expect(splitDigits(all, 1).test.labels).not.toEqual(a.test.labels);
  });
});

describe('the objective', () => {
  it('is −log softmax(classifier(sigmoid decoder(z)))_c, as TensorFlow.js computes it from the same weights', async () => {
    const dec = tfModel(weights.decoder, 'sigmoid');
    const cls = tfModel(weights.classifier, 'linear');
    const rng = Rng.fromSeed(3);
    const zs = Array.from({ length: 20 }, () => Array.from(rng.normals(weights.latentDim)));
    const logp = tf.tidy(() => tf.logSoftmax(cls.predict(dec.predict(tf.tensor2d(zs)) as tf.Tensor2D) as tf.Tensor2D));
    const expected = (await logp.array()) as number[][];
    for (const [i, z] of zs.entries()) {
      for (const c of [2, 5]) {
        // float32 (TensorFlow.js) against float64 (model.ts): agreement to float32 rounding.
        expect(latentObjective(c, z, weights)).toBeCloseTo(-expected[i]![c]!, 4);
      }
      const p = classLogProbs(weights, decode(weights, z)).map(Math.exp);
      expect(p.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    }
  });

  it('is registered as the tasks latent-digit-2 and latent-digit-5: 8-D, prior N(0, I), box [−3, 3], f* = 0 bounding every value', () => {
    expect(LATENT_TASKS.map((t) => t.name)).toEqual(['latent-digit-2', 'latent-digit-5']);
    const rng = Rng.fromSeed(4);
    for (const def of LATENT_TASKS) {
      const task = def.make(8);
      expect(task.prior).toEqual({ mean: Array(8).fill(0), std: Array(8).fill(1) });
      expect(task.bounds.lower).toEqual(Array(8).fill(-3));
      expect(task.optimum).toBe(0);
      for (let k = 0; k < 50; k++) expect(task.f(Array.from(rng.normals(8)))).toBeGreaterThan(0);
      expect(() => def.make(4)).toThrow(/8-dimensional/);
    }
  });
});

describe('the committed weights', () => {
  it('give the held-out accuracy their training record states, and classify most held-out digits correctly', () => {
    const { test } = splitDigits(loadDigits());
    const predicted = test.images.map((x) => {
      const lp = classLogProbs(weights, x);
      return lp.indexOf(Math.max(...lp));
    });
    const accuracy = predicted.filter((k, i) => k === test.labels[i]).length / test.labels.length;
    // Recorded by TensorFlow.js in float32; one image may flip between float32 and float64.
    expect(Math.abs(accuracy - (weights.training.heldOutAccuracy as number))).toBeLessThanOrEqual(1 / test.labels.length + 1e-12);
    expect(accuracy).toBeGreaterThan(0.9);
  });
});

describe('training', () => {
  it('is reproducible from its seed (a reduced model trained twice gives identical weights; another seed does not)', async () => {
    const all = loadDigits();
    const small = { images: all.images.slice(0, 128), labels: all.labels.slice(0, 128) };
    const held = { images: all.images.slice(128, 160), labels: all.labels.slice(128, 160) };
    const opts = { seed: 5, latentDim: 2, hidden: 8, vaeEpochs: 2, classifierEpochs: 2, batchSize: 32, learningRate: 1e-2 };
    const strip = (w: LatentWeights) => ({ decoder: w.decoder, classifier: w.classifier });
    const a = await trainLatentModels(small, held, opts);
    const b = await trainLatentModels(small, held, opts);
    const c = await trainLatentModels(small, held, { ...opts, seed: 6 });
    expect(strip(a.weights)).toEqual(strip(b.weights));
    expect(strip(c.weights)).not.toEqual(strip(a.weights));
    expect(a.weights.training.finalElboPerImage).toBe(b.weights.training.finalElboPerImage);
  }, 120_000);
});
