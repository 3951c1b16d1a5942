/**
 * Trains the latent-space task's generator and classifier with TensorFlow.js (pure-JavaScript CPU
 * backend), deterministically from a seed, and returns their weights as plain arrays (model.ts).
 *
 * Generator: a variational autoencoder (Kingma and Welling, 2014) with latent prior N(0, I), encoder
 * 64 → H (relu) → (μ, log σ²) of dimension d, decoder d → H (relu) → 64 logits; loss the negative
 * ELBO with a Bernoulli likelihood on the [0, 1] pixels (binary cross-entropy summed over pixels)
 * plus KL(N(μ, σ²) ‖ N(0, I)) = ½ Σ (σ² + μ² − 1 − log σ²), by the reparameterisation z = μ + σ ε.
 * Classifier: 64 → H (relu) → 10, softmax cross-entropy. Both see the training split only.
 *
 * Determinism: every initialiser and every ε draw has its own seed, and the minibatch order comes from
 * the project's seeded generator; TensorFlow.js's CPU backend is single-threaded float32, so the same
 * seed gives the same weights on the same machine (test/bench/latent.test.ts trains twice).
 */
import * as tf from '@tensorflow/tfjs';
import { Rng } from '../../src/engine/random/index.js';
import { CLASSES, PIXELS, type Digits } from './data.js';
import type { Dense, LatentWeights } from './model.js';

export interface TrainOptions {
  seed: number;
  latentDim: number;
  hidden: number;
  vaeEpochs: number;
  classifierEpochs: number;
  batchSize: number;
  learningRate: number;
}

export const DEFAULT_TRAINING: TrainOptions = {
  seed: 1,
  latentDim: 8,
  hidden: 128,
  vaeEpochs: 120,
  classifierEpochs: 60,
  batchSize: 64,
  learningRate: 2e-3,
};

function denseLayer(units: number, seed: number, inputDim?: number, activation?: 'relu'): tf.layers.Layer {
  return tf.layers.dense({
    units,
    activation: activation ?? 'linear',
    kernelInitializer: tf.initializers.glorotUniform({ seed }),
    biasInitializer: 'zeros',
    ...(inputDim === undefined ? {} : { inputShape: [inputDim] }),
  });
}

async function denseWeights(layer: tf.layers.Layer): Promise<Dense> {
  const [k, b] = layer.getWeights();
  const [inDim, outDim] = k!.shape as [number, number];
  return { in: inDim, out: outDim, kernel: Array.from(await k!.data()), bias: Array.from(await b!.data()) };
}

/** Minibatch index lists for one epoch, in a seeded random order. */
function batches(n: number, size: number, rng: Rng): number[][] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.uniform() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const out: number[][] = [];
  for (let s = 0; s < n; s += size) out.push(order.slice(s, s + size));
  return out;
}

export interface Trained {
  weights: LatentWeights;
  decoder: tf.Sequential;
  classifier: tf.Sequential;
}

export async function trainLatentModels(train: Digits, test: Digits, o: TrainOptions = DEFAULT_TRAINING, log: (line: string) => void = () => {}): Promise<Trained> {
  await tf.setBackend('cpu');
  const d = o.latentDim;
  const seed = o.seed * 100;
  const rng = Rng.fromSeed(o.seed);
  const X = tf.tensor2d(train.images, [train.images.length, PIXELS]);
  const Y = tf.oneHot(tf.tensor1d(train.labels, 'int32'), CLASSES).toFloat();

  const encoder = tf.sequential({ layers: [denseLayer(o.hidden, seed + 1, PIXELS, 'relu'), denseLayer(2 * d, seed + 2)] });
  const decoder = tf.sequential({ layers: [denseLayer(o.hidden, seed + 3, d, 'relu'), denseLayer(PIXELS, seed + 4)] });
  const vaeOpt = tf.train.adam(o.learningRate);
  let elbo = NaN;
  for (let epoch = 0; epoch < o.vaeEpochs; epoch++) {
    let total = 0;
    let count = 0;
    for (const [b, idx] of batches(train.labels.length, o.batchSize, rng).entries()) {
      const loss = tf.tidy(() => {
        const xb = tf.gather(X, tf.tensor1d(idx, 'int32'));
        return vaeOpt.minimize(() => {
          const h = encoder.apply(xb) as tf.Tensor2D;
          const mu = h.slice([0, 0], [-1, d]);
          const logVar = h.slice([0, d], [-1, d]);
          const eps = tf.randomNormal(mu.shape, 0, 1, 'float32', seed + 10_000 + epoch * 1000 + b);
          const z = mu.add(eps.mul(logVar.mul(0.5).exp()));
          const logits = decoder.apply(z) as tf.Tensor2D;
          const rec = tf.losses.sigmoidCrossEntropy(xb, logits, undefined, undefined, tf.Reduction.NONE).sum(1);
          const kl = logVar.exp().add(mu.square()).sub(1).sub(logVar).sum(1).mul(0.5);
          return rec.add(kl).mean() as tf.Scalar;
        }, true) as tf.Scalar;
      });
      total += (await loss.data())[0]! * idx.length;
      count += idx.length;
      loss.dispose();
    }
    elbo = -total / count;
    if (epoch % 10 === 9 || epoch === o.vaeEpochs - 1) log(`vae epoch ${epoch + 1}/${o.vaeEpochs}: ELBO ${elbo.toFixed(3)} nats per image`);
  }

  const classifier = tf.sequential({ layers: [denseLayer(o.hidden, seed + 5, PIXELS, 'relu'), denseLayer(CLASSES, seed + 6)] });
  const clsOpt = tf.train.adam(o.learningRate);
  let trainLoss = NaN;
  for (let epoch = 0; epoch < o.classifierEpochs; epoch++) {
    let total = 0;
    for (const idx of batches(train.labels.length, o.batchSize, rng)) {
      const loss = tf.tidy(() => {
        const ix = tf.tensor1d(idx, 'int32');
        const xb = tf.gather(X, ix);
        const yb = tf.gather(Y, ix);
        return clsOpt.minimize(() => tf.losses.softmaxCrossEntropy(yb, classifier.apply(xb) as tf.Tensor2D) as tf.Scalar, true) as tf.Scalar;
      });
      total += (await loss.data())[0]! * idx.length;
      loss.dispose();
    }
    trainLoss = total / train.labels.length;
  }
  const predicted = tf.tidy(() => (classifier.predict(tf.tensor2d(test.images, [test.images.length, PIXELS])) as tf.Tensor2D).argMax(1));
  const labels = Array.from(await predicted.data());
  predicted.dispose();
  const accuracy = labels.filter((l, i) => l === test.labels[i]).length / test.labels.length;
  log(`classifier: training cross-entropy ${trainLoss.toFixed(4)}, held-out accuracy ${(100 * accuracy).toFixed(2)}% (${test.labels.length} images)`);
  X.dispose();
  Y.dispose();

  const weights: LatentWeights = {
    latentDim: d,
    decoder: [await denseWeights(decoder.layers[0]!), await denseWeights(decoder.layers[1]!)],
    classifier: [await denseWeights(classifier.layers[0]!), await denseWeights(classifier.layers[1]!)],
    training: {
      options: o,
      trainImages: train.labels.length,
      heldOutImages: test.labels.length,
      finalElboPerImage: elbo,
      classifierTrainCrossEntropy: trainLoss,
      heldOutAccuracy: accuracy,
      library: `@tensorflow/tfjs ${tf.version.tfjs}, backend ${tf.getBackend()}`,
    },
  };
  return { weights, decoder, classifier };
}
