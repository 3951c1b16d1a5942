/**
 * CartPole with a linear policy (the paper's locomotion task, 4-D).
 *
 * Dynamics: the classic cart–pole of Barto, Sutton & Anderson (1983) with the constants and the
 * explicit Euler step of Gymnasium's CartPole-v1: gravity 9.8, cart mass 1.0, pole mass 0.1,
 * half-length 0.5, force ±10, τ = 0.02 s; an episode ends when |x| > 2.4 or |θ| > 12° or after
 * 500 steps; reward 1 per step, the terminating step included (so the return is the step count).
 * Policy: push right (action 1) iff w·s > 0, with s = (x, ẋ, θ, θ̇).
 * Objective (minimised): −(mean return over CARTPOLE_START_STATES), f* = −500.
 * Start states: Gymnasium draws each component U(−0.05, 0.05) per episode; a fixed set drawn once
 * from seed CARTPOLE_SEED makes the objective deterministic, which regret needs.
 * Prior of the paper's protocol: N(0, 9I) (σ = 3), bounds [−5, 5]^4.
 */
import { Rng } from '../random/index.js';
import type { Benchmark, BenchmarkDef } from './types.js';
import { checkDim, cube } from './types.js';

const GRAVITY = 9.8;
const MASS_CART = 1.0;
const MASS_POLE = 0.1;
const TOTAL_MASS = MASS_CART + MASS_POLE;
const HALF_LENGTH = 0.5;
const POLE_MASS_LENGTH = MASS_POLE * HALF_LENGTH;
const FORCE_MAG = 10;
const TAU = 0.02;
const X_LIMIT = 2.4;
const THETA_LIMIT = (12 * 2 * Math.PI) / 360;
export const CARTPOLE_MAX_STEPS = 500;

export type CartState = [number, number, number, number];

/** One Euler step of CartPole-v1 under action 0 (left) or 1 (right). */
export function cartpoleStep(s: CartState, action: 0 | 1): CartState {
  const [x, xDot, theta, thetaDot] = s;
  const force = action === 1 ? FORCE_MAG : -FORCE_MAG;
  const cos = Math.cos(theta);
  const sin = Math.sin(theta);
  const temp = (force + POLE_MASS_LENGTH * thetaDot * thetaDot * sin) / TOTAL_MASS;
  const thetaAcc = (GRAVITY * sin - cos * temp) / (HALF_LENGTH * (4 / 3 - (MASS_POLE * cos * cos) / TOTAL_MASS));
  const xAcc = temp - (POLE_MASS_LENGTH * thetaAcc * cos) / TOTAL_MASS;
  // Explicit Euler: positions advance with the old velocities (Gymnasium's default integrator).
  return [x + TAU * xDot, xDot + TAU * xAcc, theta + TAU * thetaDot, thetaDot + TAU * thetaAcc];
}

function terminated(s: CartState): boolean {
  return s[0] < -X_LIMIT || s[0] > X_LIMIT || s[2] < -THETA_LIMIT || s[2] > THETA_LIMIT;
}

/** Return (= number of steps survived, capped at 500) of the linear policy w from state s0. */
export function cartpoleEpisode(w: readonly number[], s0: CartState): number {
  let s = s0;
  for (let t = 1; t <= CARTPOLE_MAX_STEPS; t++) {
    const a = w[0] * s[0] + w[1] * s[1] + w[2] * s[2] + w[3] * s[3] > 0 ? 1 : 0;
    s = cartpoleStep(s, a);
    if (terminated(s)) return t;
  }
  return CARTPOLE_MAX_STEPS;
}

export const CARTPOLE_SEED = 4242;
export const CARTPOLE_EPISODES = 10;

function startStates(): CartState[] {
  const rng = Rng.fromSeed(CARTPOLE_SEED);
  const u = (): number => -0.05 + 0.1 * rng.uniform();
  return Array.from({ length: CARTPOLE_EPISODES }, () => [u(), u(), u(), u()] as CartState);
}
export const CARTPOLE_START_STATES: readonly CartState[] = startStates();

export function cartpoleObjective(w: readonly number[]): number {
  let total = 0;
  for (const s0 of CARTPOLE_START_STATES) total += cartpoleEpisode(w, s0);
  return -total / CARTPOLE_START_STATES.length;
}

export const CARTPOLE: BenchmarkDef = {
  name: 'cartpole',
  dim: 4,
  defaultDim: 4,
  make(d: number): Benchmark {
    if (d !== 4) throw new RangeError(`cartpole is 4-dimensional, not ${d}-dimensional`);
    return {
      name: 'cartpole',
      dim: 4,
      f: (w) => (checkDim('cartpole', w, 4), cartpoleObjective(w)),
      optimum: -CARTPOLE_MAX_STEPS,
      argmin: null, // many policies reach 500; see the test for one
      bounds: cube(4, -5, 5),
      prior: { mean: [0, 0, 0, 0], std: [3, 3, 3, 3] },
      source: 'Gymnasium CartPole-v1 dynamics (Euler), linear policy, 10 fixed start states (seed 4242)',
    };
  },
};
