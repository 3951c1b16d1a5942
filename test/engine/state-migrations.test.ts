/**
 * Stored engine states continue bit for bit: every fixture under test/fixtures/states/<version>/
 * (written by test/fixtures/states/record.ts with the release named in its `commit`) holds a state as
 * the database stored it, the history of its study, and the continuation that release computed from
 * it. The state is read back as the server reads it (the strategy's `migrate`, which the domain's
 * codec calls on load) and the continuation is replayed: every asked point and the final state must
 * be exactly the recorded ones (the recorded final state read through the same migration), but for the
 * fields later releases added to it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/engine/random/index.js';
import { getStrategy, migrateState, STRATEGIES } from '../../src/engine/strategies/registry.js';
import type { BaseState, Observation, StoredState } from '../../src/engine/strategies/types.js';
import type { StateFixture } from '../fixtures/states/record.js';

const ROOT = fileURLToPath(new URL('../fixtures/states/', import.meta.url));
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function fixtures(version: string): StateFixture[] {
  const dir = `${ROOT}${version}/`;
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => JSON.parse(readFileSync(dir + f, 'utf8')) as StateFixture);
}

describe.each(['v1', 'v2'])('stored %s engine states continue bit for bit', (version) => {
  const all = fixtures(version);
  it('cover every method', () => {
    expect(new Set(all.map((f) => f.method))).toEqual(new Set(['prob-cmaes', 'prob-xnes', 'prob-snes', 'cmaes', 'lq-cmaes', 'xnes', 'snes', 'bo', 'pibo', 'random']));
  });
  it.each(all.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    const strategy = getStrategy(f.method);
    let state: BaseState = migrateState(json(f.state) as unknown as StoredState);
    expect(state.version).toBe(strategy.stateVersion);
    const history: Observation[] = json(f.history);
    for (const step of f.steps) {
      if (step.op === 'ask') {
        const asked = strategy.ask(state, { history: json(history), pending: step.pending }, step.count);
        expect(asked.points).toEqual(step.points);
        state = json(asked.state);
      } else {
        history.push(...step.batch);
        state = json(strategy.tell(state, { batch: step.batch, history: json(history) }));
      }
    }
    expect(state.mean).toEqual(f.final.mean);
    expect(state.cov).toEqual(f.final.cov);
    expect(state.rng).toEqual(f.final.rng);
    expect(state.generation).toBe(f.final.generation);
    expect(state.diagnostics).toEqual(f.final.diagnostics);
    const recorded = migrateState(json(f.final) as unknown as StoredState) as BaseState & Record<string, unknown>;
    // Fields computed since these releases, the only ones a continuation may add: the ProbNES estimate's
    // residual bookkeeping (`prediction`, `surprises`, docs/ALGORITHM.md §28) and BO's `recommended` (what
    // /best names, §6). Its points, distribution and everything else are the recorded ones.
    const continued = { ...state } as BaseState & Record<string, unknown>;
    for (const added of ['prediction', 'surprises', 'recommended']) if (!(added in recorded)) delete continued[added];
    expect(continued).toEqual(recorded);
  });
});

describe('migrations', () => {
  const v1 = (name: string) => JSON.parse(readFileSync(`${ROOT}v1/${name}.json`, 'utf8')) as StateFixture;
  it('a state of the current version is returned as it is', () => {
    for (const method of Object.keys(STRATEGIES) as (keyof typeof STRATEGIES)[]) {
      const f = fixtures('v1').find((x) => x.method === method)!;
      const current = migrateState(json(f.state) as unknown as StoredState);
      expect(migrateState(json(current) as unknown as StoredState)).toEqual(current);
    }
  });
  it('a ProbNES state of version 1 gets every field of version 2', () => {
    const legacy = migrateState(v1('prob-cmaes-legacy').state as unknown as StoredState) as BaseState & Record<string, any>;
    expect(legacy).not.toHaveProperty('options');
    expect(legacy.gp).not.toHaveProperty('z');
    expect(legacy.gp.negYTilde).toEqual((v1('prob-cmaes-legacy').state as any).gp.z);
    expect(legacy).toMatchObject({ bounds: null, optimumRadius: 2, optimumAsked: null, gp: { quad: null, basis: 'constant' } });
    // The options a version-1 state lacked take the values the version-1 engine fell back on.
    expect(legacy.params).toMatchObject({ profile: 'paper', candidatePool: 0, poolSelection: 'greedy', meanFunction: 'constant', injectOptimum: 'off', activeSetCap: 0, meanInBounds: false });
    expect(Object.isFrozen(getStrategy('prob-cmaes').init({ dim: 2, batchSize: 3, options: {} }, Rng.fromSeed(1)).params)).toBe(true);
  });
  it('a state of a later version, or one that lacks what its version always held, is refused', () => {
    const f = v1('prob-xnes-paper');
    expect(() => migrateState({ ...(json(f.state) as unknown as StoredState), version: 99 })).toThrow(/versions 1 to 3, not 99/);
    const { options: _o, ...noOptions } = json(f.state) as unknown as StoredState;
    expect(() => migrateState(noOptions as StoredState)).toThrow(/no options/);
    const cma = v1('cmaes');
    expect(() => migrateState({ ...(json(cma.state) as unknown as StoredState), version: 3 })).toThrow(/cmaes reads engine states of versions 1 to 2/);
  });
});
