/**
 * Stored engine states continue bit for bit: every fixture under test/fixtures/states/<version>/
 * (written by test/fixtures/states/record.ts with the release named in its `commit`) holds a state as
 * the database stored it, the history of its study, and the continuation that release computed from
 * it. The state is read back as the server reads it and the continuation is replayed: every asked
 * point and the final distribution must be exactly the recorded ones.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { getStrategy } from '../../src/engine/strategies/registry.js';
import type { BaseState, Observation } from '../../src/engine/strategies/types.js';
import type { StateFixture } from '../fixtures/states/record.js';

const ROOT = fileURLToPath(new URL('../fixtures/states/', import.meta.url));
const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

function fixtures(version: string): StateFixture[] {
  const dir = `${ROOT}${version}/`;
  return readdirSync(dir).filter((f) => f.endsWith('.json')).sort().map((f) => JSON.parse(readFileSync(dir + f, 'utf8')) as StateFixture);
}

describe.each(['v1'])('stored %s engine states continue bit for bit', (version) => {
  const all = fixtures(version);
  it('cover every method', () => {
    expect(new Set(all.map((f) => f.method))).toEqual(new Set(['prob-cmaes', 'prob-xnes', 'prob-snes', 'cmaes', 'lq-cmaes', 'xnes', 'snes', 'bo', 'pibo', 'random']));
  });
  it.each(all.map((f) => [f.name, f] as const))('%s', (_name, f) => {
    const strategy = getStrategy(f.method);
    let state: BaseState = json(f.state);
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
  });
});
