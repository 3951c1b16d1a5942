/**
 * More workers than the batch: W workers that ask the server for W points at once (one request,
 * `count=W`) on a study whose batch_size is the method's default get batch_size points of the
 * generation and W − batch_size extras from the same distribution, so the distribution moves once
 * per W evaluations. Compared here with batch_size = W (each request one whole generation), at a
 * fixed budget of evaluations, on a shifted 5-D sphere f(x) = Σ (x_i − 1)² (f* = 0, bounds [−5, 5]).
 *
 * The loop runs in process over HTTP (app.inject, in-memory SQLite, engine inline): per round one
 * suggestions request with count = min(W, budget left), all points evaluated, one observations
 * request. Printed: final simple regret (best f) per configuration, median and range over seeds.
 *
 * Run: npm run bench:workers -- [--methods cmaes,prob-cmaes] [--workers 1,4,16,64] [--seeds 3] [--budget 250]
 */
import { buildApp } from '../src/app.js';
import { SqliteStorage } from '../src/storage/index.js';

function arg(name: string, def: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : def;
}

const METHODS = arg('methods', 'cmaes,prob-cmaes').split(',');
const WORKERS = arg('workers', '1,4,16,64').split(',').map(Number);
const SEEDS = Number(arg('seeds', '3'));
const BUDGET = Number(arg('budget', '250'));
const D = 5;
const sphere = (p: Record<string, number>) => Object.values(p).reduce((s, v) => s + (v - 1) ** 2, 0);

async function run(method: string, workers: number, batchSize: number | null, seed: number): Promise<number> {
  const storage = SqliteStorage.open(':memory:');
  const app = await buildApp({ config: { bodyLimit: 1 << 20, requestTimeoutMs: 0, rateLimitPerMinute: 0 }, storage });
  try {
    const body = {
      name: 'sphere-5d',
      method,
      seed,
      ...(batchSize === null ? {} : { batch_size: batchSize }),
      parameters: Array.from({ length: D }, (_, i) => ({ name: `x${i}`, bounds: [-5, 5] })),
    };
    const created = await app.inject({ method: 'POST', url: '/v1/studies', payload: body });
    if (created.statusCode !== 201) throw new Error(created.body);
    const id = created.json().id as string;
    let used = 0;
    let best = Infinity;
    while (used < BUDGET) {
      const count = Math.min(workers, BUDGET - used);
      const got = (await app.inject({ method: 'GET', url: `/v1/studies/${id}/suggestions?count=${count}` })).json();
      const obs = got.trials.map((t: { trial_id: number; parameters: Record<string, number> }) => ({ trial_id: t.trial_id, value: sphere(t.parameters) }));
      for (const o of obs) best = Math.min(best, o.value);
      used += obs.length;
      const res = await app.inject({ method: 'POST', url: `/v1/studies/${id}/observations`, payload: { observations: obs } });
      if (res.statusCode !== 200) throw new Error(res.body);
    }
    return best;
  } finally {
    await app.close();
    await storage.close();
  }
}

const fmt = (v: number) => v.toExponential(1);
console.log(`budget ${BUDGET}, 5-D shifted sphere, ${SEEDS} seeds; final regret median [min, max]`);
console.log('| method | workers W | batch default, count=W | batch_size = W, count=W |');
console.log('|---|---|---|---|');
for (const method of METHODS) {
  for (const w of WORKERS) {
    const cells: string[] = [];
    for (const batch of [null, w]) {
      // cmaes ranks a generation and needs batch_size ≥ 2.
      const b = batch !== null && batch < 2 ? 2 : batch;
      const r: number[] = [];
      for (let s = 1; s <= SEEDS; s++) r.push(await run(method, w, b, s));
      r.sort((a, c) => a - c);
      cells.push(`${fmt(r[Math.floor(r.length / 2)]!)} [${fmt(r[0]!)}, ${fmt(r[r.length - 1]!)}]`);
    }
    console.log(`| ${method} | ${w} | ${cells.join(' | ')} |`);
  }
}
