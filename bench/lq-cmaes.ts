/**
 * lq-CMA-ES (Hansen, "A Global Surrogate Assisted CMA-ES", GECCO 2019) against CMA-ES on the functions
 * of its reference implementation's doctests (pycma's cma.ff.sphere, elli, ellirot, rosen):
 * evaluations to reach f ≤ 1e-8 (the optimum is 0), default λ = 4 + ⌊3 ln d⌋, σ₀ = 1,
 * start at the origin, optimum at x*_i = 0.5 (the rotated functions turn around x*), seeded runs.
 * Both methods run in-process through the same loop the service uses (ask the generation's size,
 * tell the results), so lq-CMA-ES's count includes only the points it hands out.
 *
 *   npm run bench:lq-cmaes                                   # d = 2, 5, 10; 5 seeds
 *   npm run bench:lq-cmaes -- --dims 2,5 --seeds 3 --functions sphere,elli --max-evals 20000
 *
 * The paper's own measurements are on COCO's BBOB suite (its data archive: f1–f24, d = 2…40, 15
 * instances, x₀ = 0, σ₀ = 2, target f − f_opt ≤ 1e-7); `bbob-f<k>` runs function k there, run s on
 * instance s + 1 (seed 1000 + s), scored on f − f_opt:
 *
 *   npm run bench:lq-cmaes -- --functions bbob-f1,bbob-f2,bbob-f8,bbob-f10 --dims 2,5,10 --seeds 15 --sigma0 2 --target 1e-7
 *
 * Prints a markdown table (median evaluations and the speed-up CMA-ES / lq-CMA-ES per function and
 * dimension; runs that miss the target count as failures and are left out of the median).
 *
 * --out DIR writes DIR/results.md (the printed table with the command, the commit and whether the tree
 * was clean, the load) and DIR/runs.jsonl.gz, one record per run: function, d, seed, method,
 * evaluations to the target (null when missed) and final_f, the best f − f* when the run stopped.
 */
import { generationSize, getBenchmark, getStrategy, resolveOptions, Rng, type BaseState, type MethodName, type Observation } from '../src/engine/index.js';
import { loadavg } from 'node:os';
import { rotation } from '../test/helpers/numeric.js';
import { currentProvenance, writePublished } from './lib/provenance.js';

type Fn = (x: number[]) => number;
const shift = (x: number[]) => x.map((v) => v - 0.5);
const FUNCTIONS: Record<string, (d: number) => Fn> = {
  sphere: () => (x) => shift(x).reduce((s, v) => s + v * v, 0),
  elli: (d) => (x) => shift(x).reduce((s, v, i) => s + 10 ** ((6 * i) / Math.max(d - 1, 1)) * v * v, 0),
  ellirot: (d) => {
    const R = rotation(d, 5);
    return (x) => {
      const u = shift(x);
      return R.reduce((s, row, i) => s + 10 ** ((6 * i) / Math.max(d - 1, 1)) * row.reduce((t, r, j) => t + r * u[j], 0) ** 2, 0);
    };
  },
  rosen: () => (x) => {
    const u = x.map((v) => v + 0.5); // optimum (1, …, 1) − 0.5 = 0.5
    return u.slice(0, -1).reduce((s, v, i) => s + 100 * (u[i + 1] - v * v) ** 2 + (1 - v) ** 2, 0);
  },
};

/** The objective of run `run` (0-based) as f − f*: BBOB instance run + 1, or one of FUNCTIONS. */
function objective(name: string, d: number, run: number): Fn {
  const bbob = /^bbob-f\d+$/.test(name) ? getBenchmark(name, d, run + 1) : null;
  if (bbob) return (x) => bbob.f(x) - bbob.optimum;
  const make = FUNCTIONS[name];
  if (!make) throw new Error(`unknown function ${name} (${Object.keys(FUNCTIONS).join(', ')}, bbob-f1 … bbob-f24)`);
  return make(d);
}

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

/** Evaluations until f ≤ target (Infinity when the budget ran out) and the best f then. */
function evalsToTarget(method: MethodName, f: Fn, d: number, seed: number, maxEvals: number): { evals: number; best: number } {
  const strategy = getStrategy(method);
  const lambda = 4 + Math.floor(3 * Math.log(d));
  let state: BaseState = strategy.init({ dim: d, batchSize: lambda, options: resolveOptions(method, d, { sigma0 }) }, Rng.fromSeed(seed));
  const history: Observation[] = [];
  let best = Infinity;
  while (history.length < maxEvals) {
    const asked = strategy.ask(state, { history, pending: [] }, generationSize(state));
    const batch = asked.points.map((x) => ({ x, y: f(x) }));
    for (const o of batch) {
      history.push(o);
      best = Math.min(best, o.y);
      if (o.y <= target) return { evals: history.length, best };
    }
    state = strategy.tell(asked.state, { batch, history: [...history] });
  }
  return { evals: Infinity, best };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const dims = arg('dims', '2,5,10').split(',').map(Number);
const seeds = Number(arg('seeds', '5'));
const fns = arg('functions', 'sphere,elli,ellirot,rosen').split(',');
const maxEvals = Number(arg('max-evals', '30000'));
const sigma0 = Number(arg('sigma0', '1'));
const target = Number(arg('target', '1e-8'));
const outDir = arg('out', '');
const provenance = currentProvenance(`npm run bench:lq-cmaes -- ${process.argv.slice(2).join(' ')}`.trim());
const started = new Date();
const loadStart = loadavg();
const printed: string[] = [];
const records: object[] = [];
const print = (line: string) => {
  printed.push(line);
  console.log(line);
};
const t0 = process.cpuUsage();
print(`| function | d | CMA-ES: median evals (successes) | lq-CMA-ES: median evals (successes) | speed-up | lq-CMA-ES evals/d |`);
print('|---|---|---|---|---|---|');
for (const name of fns) {
  for (const d of dims) {
    const res = (m: MethodName) => Array.from({ length: seeds }, (_, s) => {
      const r = evalsToTarget(m, objective(name, d, s), d, 1000 + s, maxEvals);
      records.push({ function: name, d, seed: 1000 + s, method: m, evaluations: Number.isFinite(r.evals) ? r.evals : null, final_f: r.best, max_evals: maxEvals, sigma0, target });
      return r.evals;
    });
    const c = res('cmaes');
    const l = res('lq-cmaes');
    const ok = (xs: number[]) => xs.filter(Number.isFinite);
    const mc = median(ok(c));
    const ml = median(ok(l));
    print(`| ${name} | ${d} | ${mc} (${ok(c).length}/${seeds}) | ${ml} (${ok(l).length}/${seeds}) | ${(mc / ml).toFixed(1)} | ${(ml / d).toFixed(1)} |`);
    process.stderr.write(`${name} ${d}-D: cmaes ${c.join(' ')} | lq ${l.join(' ')}\n`);
  }
}
const cpu = process.cpuUsage(t0);
print('');
print(`CPU time ${((cpu.user + cpu.system) / 1e6).toFixed(0)} s; budget ${maxEvals} evaluations per run; seeds 1000…${1000 + seeds - 1}; σ₀ = ${sigma0}; target f − f* ≤ ${target}.`);
if (outDir) {
  const files = writePublished(outDir, { title: 'bench:lq-cmaes', provenance, started, loadStart, printed, records });
  console.log(`\nwritten: ${files.join(', ')} (${records.length} runs)`);
}
