/**
 * The paper's Swimmer-v4 task (appendix "Locomotion Tasks"): a 16-D linear policy for MuJoCo's
 * three-link swimmer, prior N(0, 9I) (σ = 3), bounds [−5, 5]^16.
 *
 * Each evaluation runs bench/swimmer/rollout.c (MuJoCo, model bench/swimmer/swimmer.xml) as a child
 * process: policy a = clip(W·obs, −1, 1) with W the 2×8 matrix of the 16 parameters, row-major;
 * 1000 steps of dt = 0.04 s; return = Σ (forward velocity − 10⁻⁴·|a|²), Gymnasium's Swimmer reward.
 * Objective (minimised): −(mean return over SWIMMER_START_STATES). f* is unknown (no published
 * optimum for a linear policy), so `optimum` is −∞ and results are reported as returns, not regret.
 *
 * Start state: Gymnasium adds U(−0.1, 0.1) noise to every qpos and qvel at each reset. The start
 * matters more than for most tasks: from the exact rest state obs = 0, so every linear policy without
 * a bias outputs a = 0 and the swimmer never moves. A fixed set of noisy starts drawn once from seed
 * SWIMMER_SEED makes the objective deterministic (as `env.reset(seed=…)` before every episode would),
 * which comparing methods on paired seeds needs. One start state keeps an evaluation at one episode
 * (≈ 60 ms of CPU), the cost of one Gymnasium episode in the paper.
 */
import { spawnSync } from 'node:child_process';
import type { Benchmark, BenchmarkDef } from '../../src/engine/benchmarks/index.js';
import { Rng } from '../../src/engine/random/index.js';
import { rolloutBinary, SWIMMER_MODEL } from './build.js';

export const SWIMMER_DIM = 16;
export const SWIMMER_SEED = 4243;
export const SWIMMER_EPISODES = 1;
/** Gymnasium's Swimmer reset_noise_scale: each of the 5 qpos and 5 qvel gets U(−0.1, 0.1). */
export const RESET_NOISE = 0.1;

/** One start state: 5 position offsets then 5 velocities, as rollout.c reads them. */
export type StartState = number[];

function startStates(): StartState[] {
  const rng = Rng.fromSeed(SWIMMER_SEED);
  return Array.from({ length: SWIMMER_EPISODES }, () => Array.from({ length: 10 }, () => RESET_NOISE * (2 * rng.uniform() - 1)));
}
export const SWIMMER_START_STATES: readonly StartState[] = startStates();

export interface EpisodeTrace {
  return: number;
  xStart: number;
  xEnd: number;
  ctrlCost: number;
  steps: number;
  /** Simulated seconds at the episode's end. */
  time: number;
}

function run(w: readonly number[], starts: readonly StartState[], args: string[]): string[] {
  if (w.length !== SWIMMER_DIM) throw new RangeError(`swimmer: expected ${SWIMMER_DIM} policy weights, got ${w.length}`);
  if (!w.every(Number.isFinite)) throw new RangeError('swimmer: policy weights must be finite');
  const input = [w, ...starts].map((row) => row.map((v) => v.toPrecision(17)).join(' ')).join('\n');
  const r = spawnSync(rolloutBinary(), [SWIMMER_MODEL, ...args], { input, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`swimmer rollout failed (${r.status ?? r.signal}): ${(r.stderr || r.error?.message || '').trim()}`);
  return r.stdout.trim().split('\n');
}

/** The return of one episode per start state (the exact rest state when `starts` is empty). */
export function swimmerReturns(w: readonly number[], starts: readonly StartState[] = SWIMMER_START_STATES, steps?: number): number[] {
  return run(w, starts, steps === undefined ? [] : ['--steps', String(steps)]).map(Number);
}

/** As swimmerReturns, with what rollout.c reports besides the return (tip x, control cost, time). */
export function swimmerTraces(w: readonly number[], starts: readonly StartState[] = SWIMMER_START_STATES, steps?: number): EpisodeTrace[] {
  return run(w, starts, ['--verbose', ...(steps === undefined ? [] : ['--steps', String(steps)])]).map((line) => {
    const [ret, , xStart, , xEnd, , ctrlCost, , n, , time] = line.split(' ');
    return { return: Number(ret), xStart: Number(xStart), xEnd: Number(xEnd), ctrlCost: Number(ctrlCost), steps: Number(n), time: Number(time) };
  });
}

export function swimmerObjective(w: readonly number[]): number {
  const returns = swimmerReturns(w);
  return -returns.reduce((a, b) => a + b, 0) / returns.length;
}

export const SWIMMER: BenchmarkDef = {
  name: 'swimmer',
  dim: SWIMMER_DIM,
  defaultDim: SWIMMER_DIM,
  make(d: number): Benchmark {
    if (d !== SWIMMER_DIM) throw new RangeError(`swimmer is ${SWIMMER_DIM}-dimensional, not ${d}-dimensional`);
    return {
      name: 'swimmer',
      dim: SWIMMER_DIM,
      f: swimmerObjective,
      optimum: -Infinity,
      argmin: null,
      bounds: { lower: Array(SWIMMER_DIM).fill(-5), upper: Array(SWIMMER_DIM).fill(5) },
      prior: { mean: Array(SWIMMER_DIM).fill(0), std: Array(SWIMMER_DIM).fill(3) },
      source: `MuJoCo 3-link swimmer (bench/swimmer/swimmer.xml), linear policy, 1000 steps of 0.04 s, ${SWIMMER_EPISODES} fixed start state (seed ${SWIMMER_SEED})`,
    };
  },
};
