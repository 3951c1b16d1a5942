/**
 * A study's loop settings: how the suggestion loop treats repeats and when a running trial is told
 * to stop. They live beside the method options (which are the engine's) and, like them, are fixed
 * at creation, echoed back and carried by export and import.
 *
 * - `allow_repeats` (default false): without it a suggestion never repeats, in user units, a
 *   configuration already evaluated or pending in the study (loop/no-repeat.ts); with it (noisy
 *   objectives, where a second evaluation of a point is information) the method's points are
 *   handed out as drawn.
 * - `stopping` (default null: off): the rule that answers intermediate reports (stopping-rule.ts).
 */
import { z } from 'zod';
import type { JsonObject } from '../../storage/index.js';

export const StoppingRuleSchema = z
  .strictObject({
    rule: z.literal('median').describe('The median stopping rule (docs/early-stopping.md): stop a trial whose best value so far is worse than the median of the completed trials\' values at the same step.'),
    min_steps: z.int().min(0).max(1_000_000_000).default(0).describe('No trial is stopped at a step below this one (Optuna MedianPruner\'s n_warmup_steps).'),
    warmup_trials: z.int().min(0).max(1_000_000).default(5).describe('No trial is stopped before this many trials have completed without being stopped (Optuna MedianPruner\'s n_startup_trials).'),
  })
  .describe('Early stopping of running trials from their intermediate values; null or absent: never stop.');

export type StoppingRule = z.output<typeof StoppingRuleSchema>;

export const AllowRepeatsSchema = z
  .boolean()
  .describe('Let a suggestion repeat a configuration (in user units) already evaluated or pending in the study, for noisy objectives. Default false: repeats are redrawn, and a study whose distribution yields no new configuration answers reason "converged".');

export interface LoopSettings {
  allowRepeats: boolean;
  stopping: StoppingRule | null;
}

export const DEFAULT_LOOP_SETTINGS: LoopSettings = { allowRepeats: false, stopping: null };

/** As stored (a JSON object the service wrote; absent keys take their defaults). */
export function readLoopSettings(stored: JsonObject | undefined): LoopSettings {
  if (!stored) return DEFAULT_LOOP_SETTINGS;
  const stopping = stored.stopping;
  return {
    allowRepeats: stored.allow_repeats === true,
    stopping: stopping && typeof stopping === 'object' && !Array.isArray(stopping) ? StoppingRuleSchema.parse(stopping) : null,
  };
}

export function writeLoopSettings(s: LoopSettings): JsonObject {
  return { allow_repeats: s.allowRepeats, stopping: s.stopping };
}
