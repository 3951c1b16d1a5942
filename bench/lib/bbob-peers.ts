/**
 * External peers of bench:bbob: Powell's BOBYQA and NEWUOA through NLopt (Debian's python3-nlopt),
 * run by bench/peers/nlopt_runner.py. They are benchmark baselines, never methods of the service.
 *
 * The runner only proposes points; every value comes from this side, from the project's BBOB
 * function (the same `bbobProblem(fn, d, instance).f` the service methods are scored on), at the
 * point projected onto the box, as bench:bbob projects every method's points. The line protocol is
 * described in the runner's header: one JSON object per line, `{"x": [...]}` answered by `{"y": f}`.
 * JSON numbers round-trip doubles exactly (Python's repr, JavaScript's shortest form), so the values
 * are bit for bit the project's.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { bbobProblem } from '../../src/engine/benchmarks/bbob.js';
import type { RunRecord } from './run.js';

export const PEERS = ['bobyqa', 'newuoa'] as const;
export type PeerName = (typeof PEERS)[number];
export const isPeer = (name: string): name is PeerName => (PEERS as readonly string[]).includes(name);

/** The program that runs a peer: Debian's Python (not the pyenv one first on PATH) and the NLopt runner. */
export interface PeerRunner {
  command: string;
  args: string[];
}
export const NLOPT_RUNNER: PeerRunner = {
  command: '/usr/bin/python3',
  args: [fileURLToPath(new URL('../peers/nlopt_runner.py', import.meta.url))],
};

/** What the runner is told: the protocol of bench:bbob (start x0, initial step = the prior's σ, the box). */
export interface PeerJob {
  method: PeerName;
  dim: number;
  budget: number;
  x0: number[];
  step: number;
  lower: number[];
  upper: number[];
  /** Seed of the restarts' start points. */
  seed: number;
  /** NLopt's relative x tolerance: a run below it has converged and restarts. */
  xtol_rel: number;
}

export interface PeerResult {
  /** Every evaluated value, in order (at most the budget). */
  values: number[];
  /** Wall ms since the start after each evaluation. */
  elapsed_ms: number[];
  restarts: number;
  /** Evaluation count at which each restart began. */
  restart_at: number[];
  /** NLopt's algorithm name and version, as the runner reports them. */
  algorithm: string;
  nlopt: string;
}

type Message = { ready: true; algorithm: string; nlopt: string } | { x: number[] } | { restart: number; after: number; start: number[]; reason: string } | { done: true; evaluations: number; restarts: number } | { error: string };

/**
 * Runs one peer job through `runner`, evaluating `objective` (which must take the point as proposed and
 * project it itself) for each point it proposes. Rejects when the runner breaks the protocol: a point of
 * the wrong dimension or with a non-finite coordinate, more evaluations than the budget, a reply that is
 * not JSON, an error message, or an exit before `done`.
 */
export function runPeer(job: PeerJob, objective: (x: readonly number[]) => number, runner: PeerRunner = NLOPT_RUNNER): Promise<PeerResult> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(runner.command, runner.args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const values: number[] = [], elapsed: number[] = [], restartAt: number[] = [];
    let stderr = '', meta = { algorithm: '?', nlopt: '?' }, settled = false;
    const fail = (why: string): void => {
      if (settled) return;
      settled = true;
      child.kill();
      reject(new Error(`${job.method}: ${why}${stderr ? `\n${stderr.trim()}` : ''}`));
    };
    child.on('error', (e) => fail(`cannot start ${runner.command}: ${e.message}`));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.stdin.on('error', () => undefined); // a runner that exits early is reported by 'close'
    const lines = createInterface({ input: child.stdout });
    lines.on('line', (line) => {
      if (settled) return;
      let m: Message;
      try {
        m = JSON.parse(line) as Message;
      } catch {
        return fail(`runner wrote a line that is not JSON: ${line.slice(0, 200)}`);
      }
      if ('error' in m) return fail(`runner error: ${m.error}`);
      if ('ready' in m) meta = { algorithm: m.algorithm, nlopt: m.nlopt };
      else if ('x' in m) {
        if (!Array.isArray(m.x) || m.x.length !== job.dim || !m.x.every((v) => typeof v === 'number' && Number.isFinite(v))) return fail(`runner proposed an invalid point ${JSON.stringify(m.x)}`);
        if (values.length >= job.budget) return fail(`runner asked for more than the budget of ${job.budget} evaluations`);
        const y = objective(m.x);
        values.push(y);
        elapsed.push(performance.now() - t0);
        child.stdin.write(`${JSON.stringify({ y })}\n`);
      } else if ('restart' in m) restartAt.push(m.after);
      else if ('done' in m) {
        if (m.evaluations !== values.length) return fail(`runner counted ${m.evaluations} evaluations, the benchmark ${values.length}`);
        settled = true;
        child.stdin.end();
        resolve({ values, elapsed_ms: elapsed, restarts: restartAt.length, restart_at: restartAt, ...meta });
      } else return fail(`runner wrote an unknown message ${line.slice(0, 200)}`);
    });
    child.on('close', (code) => fail(`runner exited (status ${code}) before it finished`));
    child.stdin.write(`${JSON.stringify(job)}\n`);
  });
}

/** One BBOB run of a peer under bench:bbob's protocol, as the RunRecord the service methods produce (one evaluation per "generation"). */
export interface PeerRunSpec {
  peer: PeerName;
  fn: number;
  dim: number;
  instance: number;
  budget: number;
  priorMean: number[];
  priorStd: number;
  box: { lower: number[]; upper: number[] };
  tag: string;
}

export const PEER_XTOL_REL = 1e-10;

export async function runPeerBbob(spec: PeerRunSpec, runner: PeerRunner = NLOPT_RUNNER): Promise<RunRecord & { restarts: number; restart_at: number[]; algorithm: string; nlopt: string }> {
  const problem = bbobProblem(spec.fn, spec.dim, spec.instance);
  const { lower, upper } = spec.box;
  const project = (x: readonly number[]): number[] => x.map((v, i) => Math.min(upper[i], Math.max(lower[i], v)));
  const r = await runPeer(
    { method: spec.peer, dim: spec.dim, budget: spec.budget, x0: spec.priorMean, step: spec.priorStd, lower, upper, seed: spec.instance, xtol_rel: PEER_XTOL_REL },
    (x) => problem.f(project(x)),
    runner,
  );
  const total = r.elapsed_ms.length ? r.elapsed_ms[r.elapsed_ms.length - 1] : 0;
  return {
    // RunRecord's method is a service method name; the peer's is the variant label (bench:bbob never resolves it).
    method: spec.peer as unknown as RunRecord['method'],
    function: `bbob-f${spec.fn}`, dim: spec.dim, seed: spec.instance, batch: 1, optimum: problem.optimum,
    values: r.values, mean_values: [],
    timings: { total_ms: total, ask_ms: 0, tell_ms: 0, updates: r.values.length },
    elapsed_ms: r.elapsed_ms, generation_ends: r.values.map((_, i) => i + 1),
    instance: spec.instance, tag: spec.tag,
    restarts: r.restarts, restart_at: r.restart_at, algorithm: r.algorithm, nlopt: r.nlopt,
  };
}
