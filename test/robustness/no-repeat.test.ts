/**
 * The no-repeat rule (src/domain/loop/no-repeat.ts) under the hostile scenarios where a method's own
 * points repeat (tiny int grids, points clipped onto the same corner of the bounds, a mean that
 * stalls on a constant objective, extreme option values): for every method, redraws never produce an
 * illegal point, an engine error or a 5xx, no configuration is handed out twice, and a study that runs
 * out of new configurations answers reason "converged" (harness.ts, with noRepeats). The other
 * robustness files run the same scenarios with allow_repeats.
 */
import { describeEveryMethod } from './harness.js';
import { GEOMETRY_SCENARIOS, VALUE_SCENARIOS } from './scenarios.js';

// huge-1e200 too: there candidates that were redrawn stay unevaluated, and lq-cmaes's surrogate fitted to
// values near 1e200 had no finite value at one of them (its update then ranks the evaluated ones).
const REPEATING = new Set(['constant', 'repeated-int-grid', 'extras-int-grid', 'correlated-prior-cut', 'bounds-cut-prior-int-log', 'options-max', 'prior-far-unbounded', 'huge-1e200']);

describeEveryMethod(
  [...VALUE_SCENARIOS, ...GEOMETRY_SCENARIOS]
    .filter((s) => REPEATING.has(s.name))
    // Their final checks expect repeats (a pigeonhole count, an unmoved mean handed out again).
    .map((s) => ({ ...s, finally: undefined, noRepeats: true })),
);
