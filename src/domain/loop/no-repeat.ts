/**
 * No wasted repeats: a suggestion never hands out, in user units, a configuration that the study
 * has already evaluated or is evaluating (every COMPLETED trial, every REQUESTED or ACTIVE one, and
 * the points of the same answer), unless the study allows repeats (loop-settings.ts, for noisy
 * objectives). A strategy's point can repeat one when its distribution stops moving (ProbNES hands
 * out the mean μ every generation; an unmoved μ is the same point), or when rounding int parameters,
 * clipping to bounds or choosing categories maps nearby draws to one configuration.
 *
 * A repeat is replaced by a redraw from the same strategy (its `ask` again, conditioned on the
 * pending points and the ones kept so far), in rounds that ask for 1, 2, 4, … (at most 32) times the
 * points still missing, six rounds at most: 63 draws when one point is missing. When even those give
 * no new configuration, a new one is unlikely (if each draw had probability p of being new, 63 misses
 * happen with probability (1 − p)^63, under 5% for p ≥ 4.6%): the distribution has converged as far
 * as the study's resolution can tell, and the answer says so instead of handing out a repeat
 * (suggestions' reason "converged"). With nothing pending either, no result can move the
 * distribution again: the study is COMPLETED with reason "converged".
 *
 * Configurations are compared as the values handed out (after rounding, exp of log scales, clipping,
 * category choice): numbers by their exact value, strings as strings.
 */
import type { ParameterValue } from '../../storage/index.js';
import { handOut } from '../studies/engine-ops.js';
import { askEngine } from './engine-ask.js';
import type { LoopContext } from './loop-context.js';
import type { SearchSpace } from '../studies/transforms.js';
import type { CompletedPoint } from './study-cache.js';
import type { StudySnapshot } from './study-snapshot.js';
import type { LoopHistory } from './engine-history.js';

/** failure reason / study reason when the distribution yields no new configuration. */
export const CONVERGED = 'converged';

const ROUNDS = 6;
const MAX_PER_ROUND = 32;

/** One configuration as a string: its values in the study's parameter order (JSON keeps strings and numbers apart). */
export function configurationKey(space: SearchSpace, parameters: Readonly<Record<string, ParameterValue>>): string {
  return JSON.stringify(space.parameters.map((p) => parameters[p.name] ?? null));
}

/** Snapshots whose last suggestion found no new configuration (read by the loop for its answer). */
const exhausted = new WeakSet<StudySnapshot>();

export function foundNoNewConfiguration(snap: StudySnapshot): boolean {
  return exhausted.has(snap);
}

/** The configurations a new point must not repeat; `add` takes one more (a point kept). */
interface Taken {
  has(key: string): boolean;
  add(key: string): void;
}

/**
 * Every configuration of the study that a new point must not repeat: the completed trials (the
 * snapshot's completedPoints(): the stored ones, whose keys the per-study cache keeps and extends
 * as results arrive, and this request's own) and the pending ones. Costs the keys of what this
 * request completed and of the pending points, not of the study's whole history.
 */
async function takenConfigurations(snap: StudySnapshot): Promise<Taken> {
  const key = (p: Pick<CompletedPoint, 'parameters'>) => configurationKey(snap.space, p.parameters);
  const stored = await snap.storedCompletedKeys(key);
  // Never added to: the stored set is the cache's.
  const local = new Set<string>();
  for (const c of snap.freshlyCompleted()) local.add(key(c));
  for (const t of snap.inState('REQUESTED', 'ACTIVE')) local.add(key(t));
  return { has: (k) => stored.has(k) || local.has(k), add: (k) => local.add(k) };
}

/**
 * The first `points.length` points, in order, that repeat no taken configuration (every completed
 * trial, as the request's completedPoints() reads them for the ask, and the pending ones) nor each other:
 * `points` themselves, then redraws through `draw(n, pending)` (an engine ask that also advances the
 * snapshot's engine state). Fewer when the redraws run out (see the header); then the snapshot is
 * marked, and the study COMPLETED as converged if nothing is pending.
 */
export async function withoutRepeats(snap: StudySnapshot, points: number[][], draw: (n: number, pending: number[][]) => Promise<number[][]>): Promise<number[][]> {
  const wanted = points.length;
  const taken = await takenConfigurations(snap);
  const kept: number[][] = [];
  const keep = (candidates: number[][]) => {
    for (const u of candidates) {
      if (kept.length === wanted) return;
      const key = configurationKey(snap.space, handOut(snap.space, u).parameters);
      if (taken.has(key)) continue;
      taken.add(key);
      kept.push(u);
    }
  };
  keep(points);
  for (let round = 0; kept.length < wanted && round < ROUNDS; round++) {
    const n = Math.min(MAX_PER_ROUND, (wanted - kept.length) * 2 ** round);
    keep(await draw(n, [...snap.pending(), ...kept]));
  }
  if (kept.length < wanted) {
    exhausted.add(snap);
    if (kept.length === 0 && snap.inState('REQUESTED', 'ACTIVE').length === 0) snap.studyState = { state: 'COMPLETED', reason: CONVERGED };
  }
  return kept;
}

/** A redraw: `n` more points from the strategy, given the points pending; advances the snapshot's engine state. */
export function redraw(snap: StudySnapshot, ctx: LoopContext, history: LoopHistory): (n: number, pending: number[][]) => Promise<number[][]> {
  return (n, pending) => askEngine(snap, ctx, history, n, pending, 'redraw');
}
