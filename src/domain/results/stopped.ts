/**
 * What the model is told of a trial that was stopped early (ALGORITHM.md §31).
 *
 * A stopped trial's value is where its evaluation was cut short, not where it would have ended, and
 * it was cut short because it looked worse than its peers (the median rule, or an Optuna pruner
 * through the bridge). Taken at face value, a stopped trial whose last value happens to be low (a
 * noisy curve, an intermediate metric on another scale than the final one, a stop for any other
 * reason) would look like one of the best results and pull every method toward it. So the engine
 * gets, for a stopped trial, the worse of its last value and the median of the results completed
 * without being stopped before it in completion order:
 *
 *   ỹ = max(y, median{ y_j : j completed before it, not stopped })      (engine values: lower is better)
 *
 * The median is the least the verdict says: the trial was worse than the median of its peers at
 * the step it stopped, and the rule's premise is that a curve keeps its rank to the end. Trials
 * without such a result before them are told as they are (nothing to compare with). A result that
 * was not stopped is told as it was reported. The stored trial is unchanged; only the engine's
 * input is. The value depends only on the trials before it in completion order, a total order
 * (completion time, then trial id) that a reloaded or imported study reads the same, so every engine
 * call of a study, replayed or not, gets the same input, and a history log only ever grows.
 */
import type { Observation } from '../../engine/index.js';
import { engineValue, type Objective, type Outcome } from './objective.js';
import { lossesOf, severalObjectives, type StudyOutcomes } from './outcomes.js';

/**
 * A completed trial as the model reads it: its internal point (none for a trial stored without one)
 * and outcome: a value (null for several objectives or an infeasible point), or several, constraint
 * values, infeasibility.
 */
export interface ModelTrial {
  point: number[] | null;
  value: number | null;
  stderr: number | null;
  values?: number[] | null;
  constraints?: number[] | null;
  infeasible?: boolean | null;
  /** Completed with failure_reason stopped_early. */
  stopped: boolean;
}

/**
 * The completed trials of a study read one at a time in completion order, each as the engine's
 * observation of it (the header's ỹ). Keeps the median of the results so far that were not stopped
 * (two heaps: O(log n) a result, the median in O(1)); `fork` copies it, for observations that
 * must not change the original (a request's results before its commit).
 */
export class ModelHistory {
  /** The lower half of the unstopped engine values, a max-heap; holds the extra one of an odd count. */
  private low: number[] = [];
  /** The upper half, a min-heap. */
  private high: number[] = [];

  /**
   * `outcomes`: the study's, when it has several objectives or constraints. The engine then gets each
   * objective's value (`f`, as it minimises them) and the constraint values (`c`) beside `y`, which it
   * recomputes per generation (ALGORITHM.md §32); a stopped trial is read as such only for one objective.
   */
  constructor(
    readonly objective: Objective,
    readonly outcomes: StudyOutcomes | null = null,
  ) {}

  /** The engine's observation of the next completed trial in completion order (null: it has no point; its value is read all the same). */
  next(t: ModelTrial): Observation | null {
    // An infeasible point has no value; the engine ranks it (ALGORITHM.md §32.4), so its y is only a placeholder.
    if (t.infeasible === true) return t.point === null ? null : { x: t.point, y: 0, infeasible: true };
    if (this.outcomes && severalObjectives(this.outcomes)) {
      const f = lossesOf(this.outcomes, t);
      if (t.point === null || f === null) return null;
      const o: Observation = { x: t.point, y: f[0]!, f };
      if (t.constraints) o.c = t.constraints;
      return o;
    }
    const y = this.value({ value: t.value!, stderr: t.stderr, stopped: t.stopped });
    if (t.point === null) return null;
    const o: Observation = t.stderr === null ? { x: t.point, y } : { x: t.point, y, stderr: t.stderr };
    if (t.constraints) o.c = t.constraints;
    return o;
  }

  /** The value the engine minimises for the next completed trial in completion order (the header's ỹ for a stopped one). */
  value(t: Outcome & { stopped: boolean }): number {
    const y = engineValue(this.objective, t.value);
    if (!t.stopped) {
      this.add(y);
      return y;
    }
    const m = this.median();
    return m !== null && m > y ? m : y;
  }

  /** The observations of `trials` (in completion order, after those read so far), points without one left out. */
  all(trials: Iterable<ModelTrial>): Observation[] {
    const out: Observation[] = [];
    for (const t of trials) {
      const o = this.next(t);
      if (o) out.push(o);
    }
    return out;
  }

  /** An independent copy: what it reads next does not change this one. */
  fork(): ModelHistory {
    const f = new ModelHistory(this.objective, this.outcomes);
    f.low = this.low.slice();
    f.high = this.high.slice();
    return f;
  }

  /** The median of the unstopped engine values read so far (the mean of the middle two for an even count); null for none. */
  median(): number | null {
    if (this.low.length === 0) return null;
    return this.low.length > this.high.length ? this.low[0]! : (this.low[0]! + this.high[0]!) / 2;
  }

  private add(y: number): void {
    if (this.low.length === 0 || y <= this.low[0]!) push(this.low, -1, y);
    else push(this.high, 1, y);
    // Rebalance: |low| = |high| or |high| + 1.
    if (this.low.length > this.high.length + 1) push(this.high, 1, pop(this.low, -1));
    else if (this.high.length > this.low.length) push(this.low, -1, pop(this.high, 1));
  }
}

/**
 * A binary heap in an array: the root is the least of sign·value (sign 1: a min-heap, −1: a
 * max-heap).
 */
function push(h: number[], sign: number, v: number): void {
  let i = h.length;
  h.push(v);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (sign * h[p]! <= sign * v) break;
    h[i] = h[p]!;
    i = p;
  }
  h[i] = v;
}

function pop(h: number[], sign: number): number {
  const top = h[0]!;
  const last = h.pop()!;
  const n = h.length;
  if (n === 0) return top;
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    const c = r < n && sign * h[r]! < sign * h[l]! ? r : l;
    if (sign * h[c]! >= sign * last) break;
    h[i] = h[c]!;
    i = c;
  }
  h[i] = last;
  return top;
}
