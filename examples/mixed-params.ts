/**
 * A user function with mixed parameters, evaluated by several workers at once: a stand-in for
 * training a model, with a learning rate searched on a log scale, an integer batch size (also log
 * scale: 16 and 32 differ as much as 512 and 1024), an integer number of layers and a dropout rate.
 * Each "training run" takes a few tens of milliseconds (an async wait, so the workers overlap), and
 * a learning rate too large for its batch size diverges: the objective throws, and the trial is
 * reported FAILED with the reason instead of stopping the run.
 *
 *   npm run example:mixed                    # starts its own server
 *   PROBNES_URL=http://127.0.0.1:8080 npm run example:mixed
 *   EXAMPLE_BUDGET=40 EXAMPLE_WORKERS=8 npm run example:mixed
 */
import { isNumericParameter, type StudySpec } from '../clients/typescript/src/index.js';
import { formatPoint, isMain, runStudyExample } from './lib/server.js';

export interface Hyperparameters {
  learning_rate: number;
  batch_size: number;
  layers: number;
  dropout: number;
}

/**
 * Validation loss of the pretend training run. A smooth bowl in the natural coordinates
 * (log10 of the learning rate, log2 of the batch size): its minimum, 0.05, is at learning_rate =
 * 10^−2.5 ≈ 3.2e−3, batch_size = 64, layers = 3, dropout = 0.2.
 */
export function validationLoss(h: Hyperparameters): number {
  // Larger batches tolerate larger steps (the linear scaling rule); past that the loss blows up.
  if ((h.learning_rate * 64) / h.batch_size > 0.05) throw new Error(`training diverged (learning_rate ${h.learning_rate.toPrecision(3)}, batch_size ${h.batch_size})`);
  return (
    0.05 +
    0.08 * (Math.log10(h.learning_rate) + 2.5) ** 2 +
    0.02 * (Math.log2(h.batch_size) - 6) ** 2 +
    0.01 * (h.layers - 3) ** 2 +
    0.5 * (h.dropout - 0.2) ** 2
  );
}
export const BEST_LOSS = 0.05;

export const spec: StudySpec = {
  name: 'mixed-params',
  direction: 'minimize',
  method: 'prob-cmaes',
  parameters: [
    { name: 'learning_rate', type: 'float', scale: 'log', bounds: [1e-5, 1] },
    { name: 'batch_size', type: 'int', scale: 'log', bounds: [16, 1024] },
    { name: 'layers', type: 'int', bounds: [1, 8] },
    { name: 'dropout', type: 'float', bounds: [0, 0.5] },
  ],
  known_optimum: BEST_LOSS,
  metadata: { example: 'mixed-params' },
};

if (isMain(import.meta.url)) {
  await runStudyExample<Hyperparameters>({
    spec,
    objective: async (p) => {
      await new Promise((r) => setTimeout(r, 10 + 5 * p.layers)); // deeper models train longer
      return validationLoss(p);
    },
    defaults: { budget: 60, workers: 4 },
    clientIdPrefix: 'trainer',
    // The effective prior the server derived from the bounds (log parameters: of ln(value)).
    headSuffix: (study) => `; priors ${study.parameters.map((p) => (isNumericParameter(p) ? `${p.name} ${p.type}/${p.scale} N(${p.prior.mean.toPrecision(3)}, ${p.prior.std.toPrecision(3)}²)` : `${p.name} categorical`)).join(', ')}`,
    countSuffix: (result) => ` by ${Object.keys(result.byClient).sort().join(', ')}`,
    report: (result) => {
      const best = result.best.observed!;
      return [
        `best value ${best.value.toFixed(4)} at ${formatPoint(best.parameters)} (optimum ${BEST_LOSS})`,
        `search mean: ${formatPoint(result.best.estimated.parameters)}`,
      ];
    },
  });
}
