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
import { printProgress, type StudySpec } from '../clients/typescript/src/index.js';
import { formatPoint, intFromEnv, isMain, runExample } from './lib/server.js';

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
  const budget = intFromEnv('EXAMPLE_BUDGET', 60);
  const workers = intFromEnv('EXAMPLE_WORKERS', 4);
  await runExample(async ({ client, baseUrl }) => {
    const study = await client.createStudy({ ...spec, batch_size: workers });
    console.log(`study ${study.id} on ${baseUrl}: ${budget} evaluations by ${workers} workers (${study.method})`);
    const result = await client.optimize(meanReturn, study.id, { budget, workers, clientIdPrefix: 'cartpole', onProgress: printProgress });
    const best = result.best.observed!;
    console.log(`${result.completed} evaluations (${result.failed} failed) in ${(result.elapsedMs / 1000).toFixed(1)}s`);
    console.log(`best value ${best.value.toFixed(1)} (mean return, max ${MAX_RETURN}) at ${formatPoint(best.parameters)}`);
    console.log(`search mean: ${formatPoint(result.best.estimated.parameters)} → mean return ${meanReturn(result.best.estimated.parameters).toFixed(1)}`);
  });
}
