/**
 * Trains the latent-space task's models and writes bench/latent/weights.json (and a picture of decoded
 * prior samples). Reproducible: the same seed gives the same weights on the same machine.
 *
 *   npm run train:latent                      # the committed weights (seed 1, 8-D latent space)
 *   npm run train:latent -- --seed 2 --out /tmp/w.json
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Rng } from '../../src/engine/random/index.js';
import { loadDigits, splitDigits } from './data.js';
import { decode, WEIGHTS_FILE } from './model.js';
import { digitGridSvg } from './images.js';
import { DEFAULT_TRAINING, trainLatentModels } from './train.js';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seed: { type: 'string' }, out: { type: 'string' }, samples: { type: 'string' } } });
  const options = { ...DEFAULT_TRAINING, seed: values.seed === undefined ? DEFAULT_TRAINING.seed : Number(values.seed) };
  const out = values.out ?? WEIGHTS_FILE;
  const { train, test } = splitDigits(loadDigits());
  const started = process.cpuUsage();
  const { weights } = await trainLatentModels(train, test, options, (l) => process.stderr.write(`${l}\n`));
  const cpu = process.cpuUsage(started);
  weights.training.cpuSeconds = Math.round((cpu.user + cpu.system) / 1e4) / 100;
  writeFileSync(out, `${JSON.stringify(weights)}\n`);
  process.stderr.write(`wrote ${out} (${weights.training.cpuSeconds} s of CPU)\n`);
  // Decoded samples of the prior N(0, I): what a reader checks to see the generator is real.
  const samples = values.samples ?? 'docs/images/latent-prior-samples.svg';
  const rng = Rng.fromSeed(7);
  const images = Array.from({ length: 40 }, () => decode(weights, Array.from(rng.normals(weights.latentDim))));
  writeFileSync(samples, digitGridSvg(images, 10));
  process.stderr.write(`wrote ${samples}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
});
