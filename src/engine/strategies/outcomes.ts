/**
 * Several objectives, constraints and infeasible points for every method (ALGORITHM.md §32): a
 * wrapper around a strategy that, before the method's ask, tell or estimate, replaces each
 * observation's value y by the generation's scalar target (multi/targets.ts) and hands the method
 * nothing else. The method itself is unchanged: it minimises y as it always does.
 *
 * Glossary: M objectives, K constraints (BaseState.outcomes); t = state.generation, the generation
 * the call belongs to (ask and tell of one generation see the same t, tell increments it after);
 * w_t the generation's weights on the simplex.
 *
 * - w_t is drawn from a generator seeded by (outcomes.seed, t), not from the state's own generator:
 *   the method's draws are those it would make anyway, and every ask and the tell of generation t
 *   score the history alike. outcomes.seed is derived at init from the method's initial generator
 *   state (a hash of its words), so it costs the method no draw either.
 * - A state without `outcomes` (one objective, no constraint) whose history holds no infeasible
 *   point passes through untouched: same objects, same `packed`, byte for byte the method's own call.
 * - Scalarised calls drop `packed` (its y are the domain's placeholders): the method reads the
 *   rescored history.
 * - estimate: a prediction of a random scalarisation means nothing to a user, so for M > 1 it is null;
 *   for M = 1 (constraints or infeasible points) the method's own, on the penalised values.
 */
import { InvalidInputError } from '../errors.js';
import { simplexWeights } from '../multi/scalarize.js';
import { targetContext, targetOf, type TargetContext } from '../multi/targets.js';
import { Rng } from '../random/index.js';
import type { AskContext, BaseState, InitSpec, Observation, OutcomesState, StoredState, StrategyDescriptor, TellContext } from './types.js';

/** The most objectives and constraints a state may declare (the API's limits are lower). */
const MAX_OBJECTIVES = 32;
const MAX_CONSTRAINTS = 256;

function checkCount(what: string, v: unknown, min: number, max: number): number {
  if (!(typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max)) throw new InvalidInputError(`${what} must be an integer in [${min}, ${max}], got ${JSON.stringify(v)}`);
  return v;
}

/** A 32-bit seed from the method's initial generator state (murmur3's finaliser over its words). */
function seedOf(state: BaseState): number {
  let h = 0x2545f491;
  for (const w of state.rng.words) {
    h = Math.imul(h ^ (w | 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h | 0;
}

/** The outcomes a state declares, or null for one objective and no constraint. */
export function outcomesOf(state: BaseState): OutcomesState | null {
  return state.outcomes ?? null;
}

/** The weights of generation t: uniform on the simplex (§32.2), from a generator of (seed, t) alone. */
export function generationWeights(o: OutcomesState, t: number): number[] {
  const rng = Rng.fromSeed((o.seed ^ Math.imul(t + 1, 0x9e3779b1)) | 0);
  return simplexWeights(rng, o.objectives);
}

function hasInfeasible(obs: readonly Observation[]): boolean {
  for (let j = 0; j < obs.length; j++) if (obs[j].infeasible) return true;
  return false;
}

/** Whether a call must rescore its observations (cheap: one pass over them without outcomes). */
function scalarises(state: BaseState, ...lists: (readonly Observation[])[]): boolean {
  return state.outcomes !== undefined || lists.some(hasInfeasible);
}

/** Generation t's target context over the evaluations (the history, or the batch when none is sent). */
export function generationContext(state: BaseState, evaluations: readonly Observation[]): TargetContext {
  const o = outcomesOf(state);
  const m = o?.objectives ?? 1;
  return targetContext(evaluations, { objectives: m, weights: m > 1 ? generationWeights(o!, state.generation) : null });
}

function rescore(ctx: TargetContext, obs: readonly Observation[]): Observation[] {
  return obs.map((o, j) => {
    const { f: _f, c: _c, infeasible: _i, ...rest } = o;
    return { ...rest, y: targetOf(ctx, o, j) };
  });
}

function checkOutcomes(raw: unknown): OutcomesState {
  if (!raw || typeof raw !== 'object') throw new InvalidInputError('the stored state\'s outcomes must be an object');
  const o = raw as Record<string, unknown>;
  return {
    objectives: checkCount('outcomes.objectives', o.objectives, 1, MAX_OBJECTIVES),
    constraints: checkCount('outcomes.constraints', o.constraints, 0, MAX_CONSTRAINTS),
    seed: checkCount('outcomes.seed', o.seed, -(2 ** 31), 2 ** 31 - 1),
  };
}

/** `inner` with several objectives, constraints and infeasible points scalarised per generation. */
export function withOutcomes<S extends BaseState>(inner: StrategyDescriptor<S>): StrategyDescriptor<S> {
  return {
    ...inner,
    init(spec: InitSpec, rng: Rng): S {
      const state = inner.init(spec, rng);
      if (!spec.outcomes) return state;
      const objectives = checkCount('outcomes.objectives', spec.outcomes.objectives, 1, MAX_OBJECTIVES);
      const constraints = checkCount('outcomes.constraints', spec.outcomes.constraints, 0, MAX_CONSTRAINTS);
      if (objectives === 1 && constraints === 0) return state;
      return { ...state, outcomes: { objectives, constraints, seed: seedOf(state) } };
    },
    ask(state: S, ctx: AskContext, count: number) {
      if (!scalarises(state, ctx.history)) return inner.ask(state, ctx, count);
      const g = generationContext(state, ctx.history);
      return inner.ask(state, { ...ctx, history: rescore(g, ctx.history) }, count);
    },
    tell(state: S, ctx: TellContext): S {
      if (!scalarises(state, ctx.history, ctx.batch)) return inner.tell(state, ctx);
      const g = generationContext(state, ctx.history.length > 0 ? ctx.history : ctx.batch);
      const { packed: _packed, ...rest } = ctx;
      return inner.tell(state, { ...rest, batch: rescore(g, ctx.batch), history: rescore(g, ctx.history) });
    },
    ...(inner.estimate
      ? {
          estimate(state: S, history: Observation[]) {
            if ((state.outcomes?.objectives ?? 1) > 1) return { predicted: null, predicted_std: null };
            if (!scalarises(state, history)) return inner.estimate!(state, history);
            return inner.estimate!(state, rescore(generationContext(state, history), history));
          },
        }
      : {}),
    migrate(stored: StoredState): S {
      const state = inner.migrate(stored);
      if (stored.outcomes === undefined) return state;
      return { ...state, outcomes: checkOutcomes(stored.outcomes) };
    },
  };
}
