/**
 * The Swimmer task on MuJoCo (bench/swimmer): the C rollout against the published Swimmer-v4/v5
 * description (Gymnasium's Swimmer documentation: frame time 0.01 s, frame_skip 4, 1000 steps,
 * reward = forward velocity − 10⁻⁴·|a|², actions in [−1, 1]), and one run through bench:paper's runner.
 * Skips (with a warning) only when Debian's libmujoco-dev or cc is missing; with CI=true it fails
 * instead, and .ci/run installs both.
 */
import { describe, expect, it } from 'vitest';
import { runOne } from '../../bench/lib/run.js';
import { getTask } from '../../bench/lib/tasks.js';
import { rolloutInfo } from '../../bench/swimmer/build.js';
import { SWIMMER_START_STATES, swimmerObjective, swimmerReturns, swimmerTraces } from '../../bench/swimmer/task.js';
import { mujocoPresent } from '../helpers/requirements.js';

const hasMujoco = mujocoPresent();

const ZERO = Array(16).fill(0);
/**
 * A policy that swims forward: the best of 25 draws from N(0, 3²) per weight (rounded to 0.1), seed 7
 * of the project's Rng, scored on the task's start state (return 51.2 when drawn).
 */
const FORWARD = [-6, 6.7, 3.8, 2.4, 3.7, 4.1, 2.8, 1.7, 4.6, 2.7, -3.2, -6.6, -1.9, -2, -1.6, 4];

describe.skipIf(!hasMujoco)('Swimmer on MuJoCo', () => {
  it('steps 0.01 s of simulation four times per action (dt = 0.04 s) for 1000 actions, as the description says', () => {
    const info = rolloutInfo();
    expect(info).toMatchObject({ timestep: 0.01, frame_skip: 4, horizon: 1000, nq: 5, nv: 5, nu: 2, obs: 8 });
    expect(info.dt).toBeCloseTo(0.04, 15);
    const [t] = swimmerTraces(FORWARD);
    expect(t.steps).toBe(1000);
    expect(t.time).toBeCloseTo(1000 * 4 * 0.01, 9); // simulated seconds at the end of the episode
    // The reward sums to (x_end − x_start)/dt − control cost: forward velocity is measured over dt = 0.04 s.
    expect(t.return).toBeCloseTo((t.xEnd - t.xStart) / 0.04 - t.ctrlCost, 6);
  }, 60_000);

  it('a zero policy leaves a swimmer at rest where it is: return 0', () => {
    expect(swimmerReturns(ZERO, [])).toEqual([0]); // the exact initial state
    // Bent joints and a moved tip, no velocity: no torque and no gravity in the plane, so nothing moves.
    const bentAtRest = [[0.05, -0.03, 0.08, -0.1, 0.07, 0, 0, 0, 0, 0]];
    const [t] = swimmerTraces(ZERO, bentAtRest);
    expect(t.return).toBe(0);
    expect(t.xEnd).toBe(t.xStart);
    expect(t.ctrlCost).toBe(0);
  }, 60_000);

  it('from the exact rest state every linear policy stays at rest (obs = 0 gives a = 0): why the task needs a noisy start', () => {
    expect(swimmerReturns(FORWARD, [])).toEqual([0]);
    expect(SWIMMER_START_STATES).toHaveLength(1);
    expect(SWIMMER_START_STATES[0]).toHaveLength(10);
    for (const v of SWIMMER_START_STATES[0]) expect(Math.abs(v)).toBeLessThanOrEqual(0.1); // Gymnasium's reset noise U(−0.1, 0.1)
  }, 60_000);

  it('a known policy swims forward: positive return, the tip more than a metre to the right', () => {
    const [t] = swimmerTraces(FORWARD);
    expect(t.return).toBeGreaterThan(40);
    expect(t.xEnd - t.xStart).toBeGreaterThan(1);
    expect(swimmerObjective(FORWARD)).toBe(-t.return); // the task minimises −return
  }, 60_000);

  it('actions are clipped to [−1, 1]: control cost at most 10⁻⁴·2 per step, whatever the weights', () => {
    const huge = FORWARD.map((w) => 1000 * w);
    const [t] = swimmerTraces(huge);
    expect(t.ctrlCost).toBeGreaterThan(0);
    expect(t.ctrlCost).toBeLessThanOrEqual(1000 * 1e-4 * 2 + 1e-12);
  }, 60_000);

  it('is deterministic: the same weights give the same return, bit for bit, in another process', () => {
    const a = swimmerReturns(FORWARD);
    const b = swimmerReturns(FORWARD);
    expect(b).toEqual(a);
    expect(swimmerReturns(FORWARD.map((w) => w + 1e-3))).not.toEqual(a);
  }, 60_000);

  it('rejects a policy of the wrong length before running anything', () => {
    expect(() => swimmerReturns(ZERO.slice(1))).toThrow(/16 policy weights/);
    expect(() => swimmerReturns([...ZERO.slice(1), NaN])).toThrow(/finite/);
  });

  it('runs through the benchmark runner as the task "swimmer" (prior N(0, 9I), bounds [−5, 5]^16)', () => {
    const task = getTask('swimmer');
    expect(task.prior).toEqual({ mean: ZERO, std: Array(16).fill(3) });
    const r = runOne({ method: 'random', fn: 'swimmer', dim: 16, seed: 0, budget: 3, batch: 3, priorMean: task.prior!.mean, priorStd: task.prior!.std, options: {}, box: task.bounds, clip: true });
    expect(r.values).toHaveLength(3);
    expect(r.mean_values).toHaveLength(1);
    for (const v of r.values) expect(Number.isFinite(v)).toBe(true);
  }, 60_000);
});
