/**
 * Learn a linear policy for CartPole: push the cart right when w·(x, ẋ, θ, θ̇) > 0, left otherwise,
 * and maximise the mean return (steps the pole stays up, at most 500) over ten fixed start states.
 * The four weights get the paper's prior N(0, 3²) each and the box [−5, 5]⁴.
 *
 *   npm run example:cartpole                 # starts its own server
 *   PROBNES_URL=http://127.0.0.1:8080 npm run example:cartpole
 *   EXAMPLE_BUDGET=40 EXAMPLE_WORKERS=2 npm run example:cartpole
 */
import { getBenchmark } from '../src/engine/index.js';
import type { StudySpec } from '../clients/typescript/src/index.js';
import { formatPoint, isMain, numericPoint, runStudyExample } from './lib/server.js';

// The simulator is the engine's CartPole benchmark (Gymnasium CartPole-v1 dynamics, ten start
// states drawn once from a fixed seed); it returns the negated mean return, for minimisers.
const task = getBenchmark('cartpole');
export const MAX_RETURN = -task.optimum; // 500 steps

const WEIGHTS = ['w_position', 'w_velocity', 'w_angle', 'w_angular_velocity'] as const;

/** Mean return of the policy over the fixed start states (higher is better, 500 at most). */
export function meanReturn(p: Record<string, number>): number {
  return -task.f(WEIGHTS.map((w) => p[w]));
}

export const spec: StudySpec = {
  name: 'cartpole-linear-policy',
  direction: 'maximize',
  method: 'prob-cmaes',
  parameters: WEIGHTS.map((name) => ({ name, bounds: [-5, 5] as [number, number], prior: { mean: 0, std: 3 } })),
  known_optimum: MAX_RETURN,
  metadata: { example: 'cartpole' },
};

if (isMain(import.meta.url)) {
  await runStudyExample({
    spec,
    objective: meanReturn,
    defaults: { budget: 60, workers: 4 },
    clientIdPrefix: 'cartpole',
    report: (result) => {
      const best = result.best.observed!;
      return [
        `best value ${best.value.toFixed(1)} (mean return, max ${MAX_RETURN}) at ${formatPoint(best.parameters)}`,
        `search mean: ${formatPoint(result.best.estimated.parameters)} → mean return ${meanReturn(numericPoint(result.best.estimated.parameters)).toFixed(1)}`,
      ];
    },
  });
}
