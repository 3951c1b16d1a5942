/**
 * Reading stored ProbNES states of versions 1 and 2 (src/engine/strategies/probnes-migrate.ts): what a
 * malformed one is refused with, and version 1's trust radius ρ_t, which that engine read only while it
 * adapted (optimum_radius_max above optimum_radius) and which is ρ₀ otherwise. The states are the recorded
 * fixtures of test/fixtures/states (written by the releases named in them), changed one field at a time.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../src/engine/errors.js';
import { migrateState } from '../../src/engine/strategies/registry.js';
import type { ProbnesState } from '../../src/engine/strategies/probnes-core.js';
import type { StoredState } from '../../src/engine/strategies/types.js';

const ROOT = fileURLToPath(new URL('../fixtures/states/', import.meta.url));
type Stored = Record<string, unknown> & { options?: unknown; gp?: Record<string, unknown> | null; params?: unknown };
const fixture = (version: 'v1' | 'v2', name: string): Stored => (JSON.parse(readFileSync(`${ROOT}${version}/${name}.json`, 'utf8')) as { state: Stored }).state;
const read = (s: Stored) => migrateState(s as unknown as StoredState) as ProbnesState;

describe('stored ProbNES states of earlier versions', () => {
  it('a version-2 state without params, or with params that are not an object, is refused with the engine\'s error', () => {
    const v2 = fixture('v2', 'prob-cmaes-default');
    expect(read(v2).params.startPhase).toBe('off');
    for (const params of [undefined, null, 'x']) {
      expect(() => read({ ...v2, params }), String(params)).toThrow(InvalidInputError);
      expect(() => read({ ...v2, params }), String(params)).toThrow(/version 2\) has no params/);
    }
  });

  it('a version-1 state without options, or with a GP that lost its targets, is refused with the engine\'s error', () => {
    const v1 = fixture('v1', 'prob-cmaes-default');
    expect(read(v1).version).toBe(3);
    for (const options of [undefined, null, 7]) {
      expect(() => read({ ...v1, options }), String(options)).toThrow(/version 1\) has no options/);
    }
    const { negYTilde: _t, ...gp } = v1.gp!;
    expect(() => read({ ...v1, gp })).toThrow(InvalidInputError);
    expect(() => read({ ...v1, gp })).toThrow(/GP without its targets/);
    // The first releases named the targets z: read as negYTilde.
    expect(read({ ...v1, gp: { ...gp, z: v1.gp!.negYTilde } }).gp!.negYTilde).toEqual(v1.gp!.negYTilde);
  });

  it('version 1\'s stored ρ_t is kept while the radius adapts (optimum_radius_max > optimum_radius), ρ₀ otherwise', () => {
    const v1 = fixture('v1', 'prob-cmaes-default');
    const withRadius = (max: number) => ({ ...v1, options: { ...(v1.options as Record<string, unknown>), optimum_radius: 3, optimum_radius_max: max }, optimumRadius: 5.5 });
    expect(read(withRadius(8)).optimumRadius).toBe(5.5);
    expect(read(withRadius(3)).optimumRadius).toBe(3);
    // Adapting but never written (the first releases wrote it only with a value): ρ₀.
    const { optimumRadius: _r, ...none } = withRadius(8);
    expect(read(none).optimumRadius).toBe(3);
  });
});
