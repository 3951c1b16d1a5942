/**
 * Warm starting a study from an earlier one (`prior.from_study`, WS-CMA-ES): the problem changed a
 * little since last time, and the new study starts where the last one ended instead of from the
 * bounds. Per seed:
 *   1. a first study on Branin shifted by A = (1, 1), `SOURCE_BUDGET` evaluations;
 *   2. the next problem, Branin shifted by B = (1.3, 0.8) (same parameters, a slightly moved optimum),
 *      `BUDGET` evaluations three ways: cold (the default prior from the bounds), warm (prior fitted
 *      to the first study's best 10%), and warm with the first study's observations copied in;
 * and prints the median and mean simple regret of each at a few budgets.
 *
 *   npm run example:warm-start                  # 10 seeds, starts its own server
 *   EXAMPLE_SEEDS=3 EXAMPLE_BUDGET=24 npm run example:warm-start
 *   npm run example:warm-start -- --out DIR   # also keep the runs
 *
 * --out DIR writes DIR/results.md (the printed table with the command, the commit and whether the tree
 * was clean, the load) and DIR/runs.jsonl.gz, one record per study on the moved problem: seed, prior,
 * the best-so-far regret after each evaluation (curve) and the final regret. Written when all seeds are done.
 */
import { priorFromStudy, type ProbnesClient, type StudySpec } from '../clients/typescript/src/index.js';
import { loadavg } from 'node:os';
import { currentProvenance, writePublished } from '../bench/lib/provenance.js';
import { intFromEnv, isMain, numericPoint, runExample } from './lib/server.js';

const BRANIN_MIN = 0.397887357729738;
const branin = (x1: number, x2: number) =>
  (x2 - (5.1 / (4 * Math.PI ** 2)) * x1 ** 2 + (5 / Math.PI) * x1 - 6) ** 2 + 10 * (1 - 1 / (8 * Math.PI)) * Math.cos(x1) + 10;
/** Branin moved by `s`: its three global minima move with it (all inside the box below for both shifts). */
export const shifted = (s: [number, number]) => (p: Record<string, number>) => branin(p.x1! - s[0], p.x2! - s[1]);
export const SOURCE_SHIFT: [number, number] = [1, 1];
export const TARGET_SHIFT: [number, number] = [1.3, 0.8];

const parameters: StudySpec['parameters'] = [
  { name: 'x1', bounds: [-4, 12] },
  { name: 'x2', bounds: [0, 17] },
];

type Variant = 'cold' | 'warm' | 'warm+observations';
const VARIANTS: Variant[] = ['cold', 'warm', 'warm+observations'];

/** Sequential ask/tell, one generation per request; the best-so-far regret after each evaluation. */
async function run(client: ProbnesClient, studyId: string, f: (p: Record<string, number>) => number, budget: number): Promise<number[]> {
  const curve: number[] = [];
  let best = Infinity;
  while (curve.length < budget) {
    const sug = await client.suggest(studyId, { count: 3, clientId: 'example' });
    if (sug.trials.length === 0) break;
    const observations = sug.trials.slice(0, budget - curve.length).map((t) => {
      const value = f(numericPoint(t.parameters));
      best = Math.min(best, value);
      curve.push(best - BRANIN_MIN);
      return { trial_id: t.trial_id, value };
    });
    await client.observe(studyId, observations);
  }
  return curve;
}

export async function warmStartTable(client: ProbnesClient, seeds: number, sourceBudget: number, budget: number): Promise<Record<Variant, number[][]>> {
  const curves: Record<Variant, number[][]> = { cold: [], warm: [], 'warm+observations': [] };
  for (let seed = 0; seed < seeds; seed++) {
    const base = { parameters, method: 'prob-cmaes' as const, batch_size: 3, seed };
    const source = await client.createStudy({ ...base, name: `branin-A-${seed}` });
    await run(client, source.id, shifted(SOURCE_SHIFT), sourceBudget);
    for (const v of VARIANTS) {
      const prior = v === 'cold' ? undefined : priorFromStudy(source.id, { includeObservations: v === 'warm+observations' });
      const study = await client.createStudy({ ...base, name: `branin-B-${v}-${seed}`, ...(prior ? { prior } : {}) });
      curves[v].push(await run(client, study.id, shifted(TARGET_SHIFT), budget));
    }
  }
  return curves;
}

const median = (a: number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export function formatTable(curves: Record<Variant, number[][]>, budgets: number[]): string {
  const head = `| prior | ${budgets.map((b) => `median regret @${b}`).join(' | ')} | mean regret @${budgets.at(-1)} |`;
  const rows = VARIANTS.map((v) => {
    const at = (b: number) => curves[v].map((c) => c[Math.min(b, c.length) - 1]!);
    const mean = at(budgets.at(-1)!).reduce((a, x) => a + x, 0) / curves[v].length;
    return `| ${v} | ${budgets.map((b) => median(at(b)).toExponential(2)).join(' | ')} | ${mean.toExponential(2)} |`;
  });
  return [head, `|${'---|'.repeat(budgets.length + 2)}`, ...rows].join('\n');
}

if (isMain(import.meta.url)) {
  const seeds = intFromEnv('EXAMPLE_SEEDS', 10);
  const sourceBudget = intFromEnv('SOURCE_BUDGET', 60);
  const budget = intFromEnv('EXAMPLE_BUDGET', 30);
  const outAt = process.argv.indexOf('--out');
  const outDir = outAt >= 0 ? process.argv[outAt + 1] : undefined;
  // The command as typed, with the settings taken from the environment.
  const env = ['EXAMPLE_SEEDS', 'SOURCE_BUDGET', 'EXAMPLE_BUDGET'].filter((k) => process.env[k]).map((k) => `${k}=${process.env[k]} `).join('');
  const provenance = currentProvenance(`${env}npm run example:warm-start -- ${process.argv.slice(2).join(' ')}`.replace(/ -- $/, '').trim());
  const started = new Date();
  const loadStart = loadavg();
  await runExample(async ({ client }) => {
    const t0 = Date.now();
    const curves = await warmStartTable(client, seeds, sourceBudget, budget);
    const budgets = [3, 9, 15, budget].filter((b, i, a) => b <= budget && a.indexOf(b) === i);
    const printed = [
      `Branin shifted by (${TARGET_SHIFT}) after a study of ${sourceBudget} evaluations on Branin shifted by (${SOURCE_SHIFT}); prob-cmaes, batch 3, ${seeds} seeds, ${((Date.now() - t0) / 1000).toFixed(0)} s`,
      formatTable(curves, budgets),
    ];
    for (const line of printed) console.log(line);
    if (outDir) {
      const records = VARIANTS.flatMap((prior) => curves[prior].map((curve, seed) => ({ seed, prior, source_budget: sourceBudget, budget, final_regret: curve.at(-1) ?? null, curve })));
      const files = writePublished(outDir, { title: 'example:warm-start', provenance, started, loadStart, printed, records });
      console.log(`written: ${files.join(', ')} (${records.length} runs)`);
    }
  });
}
