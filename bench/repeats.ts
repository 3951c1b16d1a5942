/**
 * Wasted repeats: how many suggestions repeat, in user units, a configuration the study already
 * evaluated or had pending, and the regret reached, with the service's no-repeat rule (the default)
 * against the method's own points (allow_repeats: true, the behaviour before the rule), in one run.
 *
 *   npm run bench:repeats
 *   npm run bench:repeats -- --methods prob-cmaes,cmaes --seeds 10 --out bench-results/repeats-try
 *
 * Tasks (all with a known optimum 0):
 * - staircase-2d: f(x, y) = ⌊2x − 3.4⌋² + ⌊2y + 5.2⌋² (floors, squared) on float x, y ∈ [−5, 5], zero on
 *   [1.7, 2.2) × [−2.6, −2.1): piecewise constant, so a distribution mean that stops moving is handed
 *   out again and again.
 * - int-heavy-5d: five int parameters, three log-scaled, the shape of a small network's tuning space
 *   (width ∈ [4, 256] log, depth ∈ [1, 8], batch ∈ [8, 512] log, epochs ∈ [1, 50], heads ∈ [1, 16]
 *   log): f = (ln w − ln 48)² + (d − 3)²/4 + (ln b − ln 64)² + ((e − 20)/10)² + (ln h − ln 4)²,
 *   evaluated at the values handed out (ints rounded); 0 at w = 48, d = 3, b = 64, e = 20, h = 4.
 * - mixed-4d: the same with a log-scaled float learning rate (lr ∈ [1e-4, 1]) in place of epochs and
 *   heads: f = (ln w − ln 48)² + (d − 3)²/4 + (ln b − ln 64)² + (ln lr − ln 0.01)²/4.
 * Each run is a sequential client: it asks for one generation (batch_size points) at a time and
 * reports them, until `budget` evaluations or the answer's reason is "converged".
 *
 * Writes to --out: runs.jsonl (one line per run), results.md (table), config.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InlineEngineRunner, LoopService, StudyService, type CreateStudyInput } from '../src/domain/index.js';
import { CreateStudyRequest } from '../src/domain/index.js';
import { SqliteStorage } from '../src/storage/index.js';

interface Task {
  name: string;
  budget: number;
  parameters: unknown[];
  f: (p: Record<string, number>) => number;
}

/** The width, depth and batch size int-heavy-5d and mixed-4d share, and their part of f: 0 at w = 48, d = 3, b = 64. */
const NETWORK_PARAMETERS = [
  { name: 'width', type: 'int', scale: 'log', bounds: [4, 256] },
  { name: 'depth', type: 'int', bounds: [1, 8] },
  { name: 'batch', type: 'int', scale: 'log', bounds: [8, 512] },
];
const networkLoss = (p: Record<string, number>): number =>
  (Math.log(p.width!) - Math.log(48)) ** 2 + (p.depth! - 3) ** 2 / 4 + (Math.log(p.batch!) - Math.log(64)) ** 2;

const TASKS: Task[] = [
  {
    name: 'staircase-2d',
    budget: 60,
    parameters: [
      { name: 'x', bounds: [-5, 5] },
      { name: 'y', bounds: [-5, 5] },
    ],
    f: (p) => Math.floor(2 * p.x! - 3.4) ** 2 + Math.floor(2 * p.y! + 5.2) ** 2,
  },
  {
    name: 'int-heavy-5d',
    budget: 60,
    parameters: [
      ...NETWORK_PARAMETERS,
      { name: 'epochs', type: 'int', bounds: [1, 50] },
      { name: 'heads', type: 'int', scale: 'log', bounds: [1, 16] },
    ],
    f: (p) => networkLoss(p) + ((p.epochs! - 20) / 10) ** 2 + (Math.log(p.heads!) - Math.log(4)) ** 2,
  },
  {
    name: 'mixed-4d',
    budget: 60,
    parameters: [
      ...NETWORK_PARAMETERS,
      { name: 'lr', scale: 'log', bounds: [1e-4, 1] },
    ],
    f: (p) => networkLoss(p) + (Math.log(p.lr!) - Math.log(0.01)) ** 2 / 4,
  },
];

interface RunRecord {
  task: string;
  method: string;
  allowRepeats: boolean;
  seed: number;
  evaluations: number;
  repeats: number;
  distinct: number;
  converged: boolean;
  best: number;
  /** Best value after each evaluation. */
  bestSoFar: number[];
  ms: number;
}

function arg(name: string, fallback: string): string {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : fallback;
}

async function runOne(task: Task, method: string, allowRepeats: boolean, seed: number): Promise<RunRecord> {
  const storage = SqliteStorage.open(':memory:');
  const engine = new InlineEngineRunner();
  try {
    const studies = new StudyService({ storage, engine });
    const loop = new LoopService({ storage, runner: engine });
    const input: CreateStudyInput = CreateStudyRequest.parse({ name: task.name, method, batch_size: 4, seed, parameters: task.parameters, allow_repeats: allowRepeats });
    const study = await studies.create('default', input);
    const seen = new Set<string>();
    const bestSoFar: number[] = [];
    let repeats = 0;
    let converged = false;
    const t0 = performance.now();
    while (bestSoFar.length < task.budget) {
      const s = await loop.suggest('default', study.id, Math.min(4, task.budget - bestSoFar.length));
      if (s.trials.length === 0) {
        converged = s.reason === 'converged';
        break;
      }
      const observations = s.trials.map((t) => {
        const p = t.parameters as Record<string, number>;
        const key = JSON.stringify(Object.keys(p).sort().map((k) => p[k]));
        if (seen.has(key)) repeats++;
        seen.add(key);
        const value = task.f(p);
        bestSoFar.push(Math.min(value, bestSoFar[bestSoFar.length - 1] ?? Infinity));
        return { trial_id: t.trialId, value };
      });
      await loop.observe('default', study.id, observations);
      if (s.reason === 'converged') {
        converged = true;
        break;
      }
    }
    const best = bestSoFar[bestSoFar.length - 1] ?? Infinity;
    return { task: task.name, method, allowRepeats, seed, evaluations: bestSoFar.length, repeats, distinct: seen.size, converged, best, bestSoFar, ms: performance.now() - t0 };
  } finally {
    await storage.close();
  }
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const se = (v: number[]) => (v.length < 2 ? 0 : Math.sqrt(v.reduce((a, b) => a + (b - mean(v)) ** 2, 0) / (v.length - 1) / v.length));
const fmt = (x: number) => (Math.abs(x) >= 100 || x === 0 ? x.toFixed(0) : x.toPrecision(3));

function report(records: RunRecord[], methods: string[], seeds: number): string {
  const lines = [
    `Sequential client, batch_size 4, ${seeds} seeds; best = best value reached (regret: the optimum is 0), mean ± standard error over seeds.`,
    '',
    '| task | method | points | runs | evaluations (mean) | repeats (total) | runs with a repeat | converged early | best at ⅓ budget | best at ⅔ budget | best at the end (mean ± SE) |',
    '|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const task of TASKS) {
    for (const method of methods) {
      for (const allow of [true, false]) {
        const rs = records.filter((r) => r.task === task.name && r.method === method && r.allowRepeats === allow);
        if (rs.length === 0) continue;
        const best = rs.map((r) => r.best);
        // A run that stopped early (converged) keeps its best for the rest of the budget.
        const at = (n: number) => fmt(mean(rs.map((r) => r.bestSoFar[Math.min(n, r.bestSoFar.length) - 1] ?? Infinity)));
        lines.push(
          `| ${task.name} | ${method} | ${allow ? 'method\'s own (allow_repeats)' : 'no repeats (default)'} | ${rs.length} | ${mean(rs.map((r) => r.evaluations)).toFixed(1)} | ${rs.reduce((a, r) => a + r.repeats, 0)} | ${rs.filter((r) => r.repeats > 0).length} | ${rs.filter((r) => r.converged).length} | ${at(Math.round(task.budget / 3))} | ${at(Math.round((2 * task.budget) / 3))} | ${fmt(mean(best))} ± ${fmt(se(best))} |`,
        );
      }
    }
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const methods = arg('methods', 'prob-cmaes,cmaes,bo').split(',');
  const seeds = Number(arg('seeds', '10'));
  const out = arg('out', `bench-results/repeats-${new Date().toISOString().slice(0, 10)}`);
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'config.json'), `${JSON.stringify({ argv: process.argv.slice(2), methods, seeds, tasks: TASKS.map((t) => ({ name: t.name, budget: t.budget, parameters: t.parameters })) }, null, 2)}\n`);
  const records: RunRecord[] = [];
  const lines: string[] = [];
  for (const task of TASKS) {
    for (const method of methods) {
      for (let seed = 1; seed <= seeds; seed++) {
        for (const allow of [true, false]) {
          const r = await runOne(task, method, allow, seed);
          records.push(r);
          lines.push(JSON.stringify(r));
          process.stderr.write(`${task.name} ${method} seed ${seed} ${allow ? 'allow' : 'no-repeat'}: ${r.evaluations} evals, ${r.repeats} repeats, best ${fmt(r.best)}${r.converged ? ', converged' : ''} (${r.ms.toFixed(0)} ms)\n`);
        }
      }
    }
  }
  writeFileSync(join(out, 'runs.jsonl'), `${lines.join('\n')}\n`);
  const table = report(records, methods, seeds);
  writeFileSync(join(out, 'results.md'), `# Wasted repeats (npm run bench:repeats)\n\n${table}\n`);
  process.stdout.write(`${table}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
