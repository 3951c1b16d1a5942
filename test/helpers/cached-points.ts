/**
 * Completed points for StudyCache's unit tests (src/domain/loop/study-cache.ts): one numeric
 * parameter `k`, its configuration key `of`, and an empty search space (the cache only hands the
 * space to `of`).
 */
import type { CompletedPoint } from '../../src/domain/loop/study-cache.js';
import type { SearchSpace } from '../../src/domain/studies/transforms.js';

/** Trial `trialId` completed with k = value = `k` (trialId < 10: the timestamps stay well-formed). */
export const point = (trialId: number, k: number): CompletedPoint => ({
  trialId,
  completedAt: `2025-01-02T12:00:0${trialId}.000Z`,
  point: [k],
  value: k,
  stderr: null,
  parameters: { k },
  stopped: false,
});
export const space = {} as SearchSpace;
export const of = (p: CompletedPoint) => JSON.stringify([p.parameters.k]);
