/**
 * Learn a linear policy for MuJoCo's three-link swimmer (the paper's Swimmer task): the action is
 * clip(W·obs, −1, 1), W the 2×8 matrix of the 16 weights, and the objective is the return of one
 * 1000-step episode from a fixed start state (bench/swimmer/task.ts: forward velocity − 10⁻⁴·|a|²).
 * Each weight gets the paper's prior N(0, 3²) and the box [−5, 5]. Needs Debian's libmujoco-dev and
 * a C compiler (the rollout, bench/swimmer/rollout.c, is compiled on first use).
 *
 *   npm run example:swimmer                  # starts its own server
 *   PROBNES_URL=http://127.0.0.1:8080 npm run example:swimmer
 *   EXAMPLE_BUDGET=60 EXAMPLE_WORKERS=2 npm run example:swimmer
 */
import type { StudySpec } from '../clients/typescript/src/index.js';
import { SWIMMER_DIM, swimmerObjective } from '../bench/swimmer/task.js';
import { formatPoint, isMain, numericPoint, runStudyExample } from './lib/server.js';

/** w_<action>_<observation>: row-major, as rollout.c reads W (action 0..1, observation 0..7). */
export const WEIGHTS = Array.from({ length: SWIMMER_DIM }, (_, k) => `w_${Math.floor(k / 8)}_${k % 8}`);

/** The episode's return for the policy (higher is better; the task minimises its negation). */
export function swimmerReturn(p: Record<string, number>): number {
  return -swimmerObjective(WEIGHTS.map((w) => p[w]));
}

export const spec: StudySpec = {
  name: 'swimmer-linear-policy',
  direction: 'maximize',
  method: 'prob-cmaes',
  parameters: WEIGHTS.map((name) => ({ name, bounds: [-5, 5] as [number, number], prior: { mean: 0, std: 3 } })),
  metadata: { example: 'swimmer' },
};

if (isMain(import.meta.url)) {
  await runStudyExample({
    spec,
    objective: swimmerReturn,
    defaults: { budget: 150, workers: 3 },
    clientIdPrefix: 'swimmer',
    unit: 'episodes',
    report: (result) => {
      const best = result.best.observed!;
      return [
        `best value ${best.value.toFixed(1)} (return of one episode) at ${formatPoint(best.parameters)}`,
        `search mean: ${formatPoint(result.best.estimated.parameters)} → return ${swimmerReturn(numericPoint(result.best.estimated.parameters)).toFixed(1)}`,
      ];
    },
  });
}
