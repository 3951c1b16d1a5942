/**
 * ProbNES ablations, one command each (protocol of ALGORITHM.md §7 unless the ablation changes it:
 * prior N(−1, I), q = 3, 153 evaluations, default profile, Prob-CMAES):
 *
 *   npx tsx bench/ablations.ts acquisition      # batch-bq vs none (plain samples from ν)
 *   npx tsx bench/ablations.ts active-set       # active set on vs off
 *   npx tsx bench/ablations.ts gradient         # expected vs sampled gradient
 *   npx tsx bench/ablations.ts batch            # q = 3, 5, 10
 *   npx tsx bench/ablations.ts prior            # N(−1, I) vs wrong N(−3, I) vs weak N(−1, 16 I)
 *   npx tsx bench/ablations.ts dimension        # Ackley, Levy, StyblinskiTang at d = 2, 5, 10, 20
 *   npx tsx bench/ablations.ts profile          # paper profile, each default-profile change alone, default
 *   npx tsx bench/ablations.ts candidate-pool   # batch BQ: best of 1000 random batches vs greedy from a pool
 *   npx tsx bench/ablations.ts quadratic        # the quadratic-mean changes (ALGORITHM.md §14–§19) one by one
 *   npx tsx bench/ablations.ts quadratic-bbob   # the same on BBOB f1–f24 at d = 5 (prior N(0, 4 I), box [−5, 5]^d, 50·d evaluations)
 *   npx tsx bench/ablations.ts step             # the mean's bounds and step (ALGORITHM.md §18, §22) against the default
 *   npx tsx bench/ablations.ts step-bbob        # the same on BBOB f1–f24 at d = 5
 *   npx tsx bench/ablations.ts points-bbob --seeds 5   # the model's optimum as a batch point (ALGORITHM.md §24), BBOB d = 2, 5
 *   npx tsx bench/ablations.ts radius           # prob-cmaes's trust radius of the model's optimum, 2 vs 3 (ALGORITHM.md §24)
 *   npx tsx bench/ablations.ts radius-bbob --seeds 5   # the same on BBOB f1–f24 at d = 2 and 5, instances 1–5
 *   npx tsx bench/ablations.ts fit-starts       # GP fit: default start every generation vs every 10th vs warm start only; active-set cap 50
 *   npx tsx bench/ablations.ts fit-starts-bbob --seeds 2   # the same on BBOB f1–f24 at d = 2 and 5, instances 1–2
 *   npx tsx bench/ablations.ts vague --seeds 10   # multimodal 8-D problems with vague priors (bench/lib/vague-problems.ts), 50·d evaluations
 *   npx tsx bench/ablations.ts start            # Powell's start phase (ALGORITHM.md §29) against none, and with a full quadratic model
 *   npx tsx bench/ablations.ts start-bbob --seeds 5   # the same on BBOB f1–f24 at d = 2 and 5, instances 1–5, 50·d evaluations
 *
 * Common flags: --seeds 15 --methods prob-cmaes[,…] --functions ackley:2,… --workers 2 --out dir,
 * --variants 0,2 (only those variants, by position), --seed-offset 100 (seeds 100 … 114: a second sample).
 * Prints a markdown table of ln(mean regret) at the end of the budget, best-queried-point scoring
 * (mean scoring in parentheses), and writes every run to <out>/<ablation>.jsonl (each line with its
 * provenance: commit, dirty flag, command) and the table with its command and commit to <out>/<ablation>.md.
 * Published ablations live in bench-results/published/ablations/ as <ablation>.jsonl.gz and <ablation>.md.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { MethodName, Options } from '../src/engine/index.js';
import { currentProvenance, describeProvenance, type Provenance } from './lib/provenance.js';
import { runOne } from './lib/run.js';
import { isVagueProblem, runVague, VAGUE_FUNCTIONS, VAGUE_VARIANTS } from './lib/vague-problems.js';

interface Variant {
  label: string;
  options: Options;
  batch?: number;
  prior?: { mean: number; std: number };
}

/** An ablation's setting when it is not the paper protocol (BBOB: prior, box clipping, budget per dimension). */
interface Setting {
  prior: { mean: number; std: number };
  clip: boolean;
  budgetPerDim: number | null;
}

/** The quadratic-mean changes, cumulative then each removed from the default (ALGORITHM.md §14–§19). */
const QUADRATIC_VARIANTS: Variant[] = [
  { label: 'constant mean (before)', options: { mean_function: 'constant', active_set_floor: false } },
  { label: '+ quadratic mean', options: { active_set_floor: false, learning_rate_cov_quadratic: 0.5, mean_step: 'natural', cov_step_limit: 100 } },
  { label: '+ floor', options: { learning_rate_cov_quadratic: 0.5, mean_step: 'natural', cov_step_limit: 100 } },
  { label: '+ η_Σ = 1', options: { mean_step: 'natural', cov_step_limit: 100 } },
  { label: 'default', options: {} },
  { label: 'default, line step', options: { mean_step: 'line' } },
];
/**
 * The mean's bounds and step (ALGORITHM.md §18, §22). Every variant names its step, so the list
 * does not depend on the default (line step, mean in bounds); the first is the default before them.
 */
const STEP_VARIANTS: Variant[] = [
  { label: 'newton step, μ unbounded', options: { mean_step: 'newton', mean_in_bounds: false } },
  { label: 'newton step', options: { mean_step: 'newton' } },
  { label: 'line step', options: { mean_step: 'line' } },
  { label: 'newton step, trust radius 1', options: { mean_step: 'newton', trust_radius: 1 } },
  { label: 'cauchy step', options: { mean_step: 'cauchy' } },
  { label: 'cauchy step, linear step', options: { mean_step: 'cauchy', mean_step_linear: true } },
  { label: 'line step, linear step', options: { mean_step: 'line', mean_step_linear: true } },
  { label: 'newton step, linear step', options: { mean_step: 'newton', mean_step_linear: true } },
  { label: 'newton-cauchy step', options: { mean_step: 'newton-cauchy' } },
  { label: 'newton-cauchy step, linear step', options: { mean_step: 'newton-cauchy', mean_step_linear: true } },
  { label: 'line step, free coordinates', options: { mean_step: 'line', mean_step_free: true } },
];
/**
 * How the batch's points are chosen once the mean is quadratic (ALGORITHM.md §24): the model's
 * trust-region optimum as one point of the batch, at three trust radii.
 */
const POINT_VARIANTS: Variant[] = [
  { label: 'no injected optimum', options: { inject_optimum: 'off' } },
  { label: 'basis optimum, radius 1', options: { inject_optimum: 'basis', optimum_radius: 1 } },
  { label: 'basis optimum, radius 2', options: { inject_optimum: 'basis', optimum_radius: 2 } },
  { label: 'basis optimum, radius 4', options: { inject_optimum: 'basis', optimum_radius: 4 } },
  { label: 'weighted optimum, radius 1', options: { inject_optimum: 'weighted', optimum_radius: 1 } },
  { label: 'weighted optimum, radius 2', options: { inject_optimum: 'weighted', optimum_radius: 2 } },
  { label: 'weighted optimum, radius 4', options: { inject_optimum: 'weighted', optimum_radius: 4 } },
  { label: 'weighted optimum, radius 100', options: { inject_optimum: 'weighted', optimum_radius: 100 } },
];
/** prob-cmaes's trust radius of the model's optimum (ALGORITHM.md §24): 2, the shared default, against 3, prob-cmaes's. */
const RADIUS_VARIANTS: Variant[] = [
  { label: 'optimum radius 2', options: { optimum_radius: 2 } },
  { label: 'optimum radius 3 (default)', options: { optimum_radius: 3 } },
];
/** The GP fit's cost levers: its starts once a warm start exists (option gp_cold_start_every), and a smaller active-set cap. */
const FIT_START_VARIANTS: Variant[] = [
  { label: 'default start every generation', options: { gp_cold_start_every: 1 } },
  { label: 'default start every 10th', options: { gp_cold_start_every: 10 } },
  { label: 'warm start only', options: { gp_cold_start_every: 0 } },
  { label: 'warm start only, cap 50', options: { gp_cold_start_every: 0, active_set_cap: 50 } },
  { label: 'cap 50', options: { active_set_cap: 50 } },
];
/** Powell's start phase (ALGORITHM.md §29; no budget declared: max(5·d, 20) evaluations) against none, the default before it. */
const START_VARIANTS: Variant[] = [
  { label: 'no start phase (before)', options: { start_phase: 'off' } },
  { label: 'Powell start phase (default)', options: {} },
  { label: 'start phase, full quadratic model', options: { start_phase_points: 1_000_000 } },
  { label: 'start phase, the prior\'s Σ at the hand-over', options: { start_phase_handover: 'prior' } },
  { label: 'start phase, μ the search\'s own', options: { start_phase_mean: 'search' } },
  { label: 'start phase, μ the search\'s own, the prior\'s Σ at the hand-over', options: { start_phase_mean: 'search', start_phase_handover: 'prior' } },
  { label: 'start phase, Σ at the hand-over widened to a largest variance of 0.25', options: { start_phase_cov_floor: 0.25 } },
  { label: 'start phase, Σ at the hand-over widened to a largest variance of 1', options: { start_phase_cov_floor: 1 } },
  { label: 'start phase, Powell\'s point in every later generation', options: { start_phase_trail: true } },
  { label: 'start phase, BOBYQA\'s far-point test (the phase before 79950f1)', options: { start_phase_far: 'bobyqa' } },
  { label: 'start phase, no restarts of a converged search (before 301b5d0, §33)', options: { restart_after: 0 } },
];
const BBOB_D2_D5 = [2, 5].flatMap((d) => Array.from({ length: 24 }, (_, i) => `bbob-f${i + 1}:${d}`)).join(',');
const BBOB_D5 = Array.from({ length: 24 }, (_, i) => `bbob-f${i + 1}:5`).join(',');
interface Job { variant: Variant; method: MethodName; fn: string; dim: number; seed: number }

const PAPER_FNS = 'ackley:2,rastrigin:1,rastrigin:2,branin:2,griewank:2,levy:2,shekel:4,styblinski-tang:2,three-hump-camel:2';
const ABLATIONS: Record<string, { variants: Variant[]; functions?: string; setting?: Setting }> = {
  quadratic: { variants: QUADRATIC_VARIANTS },
  'fit-starts': { variants: FIT_START_VARIANTS },
  'fit-starts-bbob': { variants: FIT_START_VARIANTS, functions: BBOB_D2_D5, setting: { prior: { mean: 0, std: 2 }, clip: true, budgetPerDim: 50 } },
  'quadratic-bbob': { variants: QUADRATIC_VARIANTS, functions: BBOB_D5, setting: { prior: { mean: 0, std: 2 }, clip: true, budgetPerDim: 50 } },
  step: { variants: STEP_VARIANTS },
  points: { variants: POINT_VARIANTS },
  'points-bbob': { variants: POINT_VARIANTS, functions: BBOB_D2_D5, setting: { prior: { mean: 0, std: 2 }, clip: true, budgetPerDim: 50 } },
  radius: { variants: RADIUS_VARIANTS },
  'radius-bbob': { variants: RADIUS_VARIANTS, functions: BBOB_D2_D5, setting: { prior: { mean: 0, std: 2 }, clip: true, budgetPerDim: 50 } },
  'step-bbob': { variants: STEP_VARIANTS, functions: BBOB_D5, setting: { prior: { mean: 0, std: 2 }, clip: true, budgetPerDim: 50 } },
  start: { variants: START_VARIANTS },
  'start-bbob': { variants: START_VARIANTS, functions: BBOB_D2_D5, setting: { prior: { mean: 0, std: 2 }, clip: true, budgetPerDim: 50 } },
  // Each problem brings its own vague prior and box (the setting's prior is not used for them).
  vague: { variants: VAGUE_VARIANTS, functions: VAGUE_FUNCTIONS, setting: { prior: { mean: 0, std: 1 }, clip: true, budgetPerDim: 50 } },
  acquisition: { variants: [{ label: 'batch-bq', options: {} }, { label: 'none', options: { acquisition: 'none' } }] },
  'active-set': { variants: [{ label: 'active set on', options: {} }, { label: 'active set off', options: { active_set: false } }] },
  gradient: { variants: [{ label: 'expected', options: {} }, { label: 'sampled', options: { gradient: 'sampled' } }] },
  batch: { variants: [3, 5, 10].map((q) => ({ label: `q = ${q}`, options: {}, batch: q })) },
  prior: {
    variants: [
      { label: 'N(−1, I)', options: {} },
      { label: 'wrong N(−3, I)', options: {}, prior: { mean: -3, std: 1 } },
      { label: 'weak N(−1, 16 I)', options: {}, prior: { mean: -1, std: 4 } },
    ],
  },
  dimension: { variants: [{ label: 'default', options: {} }], functions: [2, 5, 10, 20].flatMap((d) => [`ackley:${d}`, `levy:${d}`, `styblinski-tang:${d}`]).join(',') },
  'candidate-pool': {
    variants: [
      { label: '1000 batches of fresh draws', options: { candidate_pool: 0 } },
      { label: 'greedy from 100 points', options: { candidate_pool: 100, pool_selection: 'greedy' } },
      { label: 'greedy from 200 points', options: { candidate_pool: 200, pool_selection: 'greedy' } },
      { label: 'greedy from 500 points', options: { candidate_pool: 500, pool_selection: 'greedy' } },
      { label: 'best of 1000 random batches from 200 points', options: { candidate_pool: 200, pool_selection: 'random-batches' } },
    ],
  },
  profile: {
    variants: [
      { label: 'paper', options: { profile: 'paper' } },
      { label: 'paper + warm start', options: { profile: 'paper', gp_warm_start: true } },
      { label: 'paper + mean in batch', options: { profile: 'paper', include_mean: true } },
      { label: 'paper + natural SNES', options: { profile: 'paper', snes_form: 'natural' } },
      { label: 'default', options: { profile: 'default' } },
    ],
  },
};

const { values: v, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seeds: { type: 'string' }, methods: { type: 'string' }, functions: { type: 'string' }, workers: { type: 'string' },
    out: { type: 'string' }, shard: { type: 'string' }, jsonl: { type: 'string' }, variants: { type: 'string' }, 'seed-offset': { type: 'string' },
  },
});
const name = positionals[0];
const ab = ABLATIONS[name];
if (!ab) {
  console.error(`usage: npx tsx bench/ablations.ts <${Object.keys(ABLATIONS).join('|')}> [--seeds 15] [--methods m,…] [--functions f:d,…] [--workers 2] [--out dir]`);
  process.exit(2);
}
const seeds = Number(v.seeds ?? 15);
const methods = (v.methods ?? 'prob-cmaes').split(',') as MethodName[];
const fns = (v.functions ?? ab.functions ?? PAPER_FNS).split(',').map((s) => ({ fn: s.split(':')[0], dim: Number(s.split(':')[1] ?? 2) }));
// --variants 0,2: only those variants (by position in the list above), e.g. to add one to a finished run.
const variants = v.variants ? v.variants.split(',').map((i) => ab.variants[Number(i)]) : ab.variants;
const seedOffset = Number(v['seed-offset'] ?? 0);
const jobs: Job[] = variants.flatMap((variant) => methods.flatMap((method) => fns.flatMap(({ fn, dim }) => Array.from({ length: seeds }, (_, k) => ({ variant, method, fn, dim, seed: seedOffset + k })))));

/** The command as typed; the shards, which re-run this file with other flags, get it from their parent. */
const COMMAND = process.env.ABLATION_COMMAND ?? `npm run bench:ablations -- ${process.argv.slice(2).join(' ')}`;
const PROVENANCE: Provenance = currentProvenance(COMMAND);

function runJob(j: Job): Record<string, unknown> {
  const q = j.variant.batch ?? 3;
  const p = j.variant.prior ?? ab.setting?.prior ?? { mean: -1, std: 1 };
  const budget = ab.setting?.budgetPerDim ? ab.setting.budgetPerDim * j.dim : 153;
  // BBOB functions take the instance from the seed (instances 1, 2, …), as bench:bbob does.
  const seed = ab.setting ? j.seed + 1 : j.seed;
  const r = isVagueProblem(j.fn) ? runVague({ method: j.method, fn: j.fn, dim: j.dim, seed, budget, batch: q, options: { ...j.variant.options } }) : runOne({
    method: j.method, fn: j.fn, dim: j.dim, seed, budget, batch: q,
    priorMean: Array(j.dim).fill(p.mean), priorStd: Array(j.dim).fill(p.std),
    // BBOB: the box [−5, 5]^d is the study's bounds, as bench:bbob gives it (points projected onto it).
    options: { ...j.variant.options }, box: ab.setting?.clip ? { lower: Array(j.dim).fill(-5), upper: Array(j.dim).fill(5) } : null, clip: ab.setting?.clip ?? false,
    ...(ab.setting ? { instance: seed } : {}),
  });
  const best = Math.max(0, Math.min(...r.values) - r.optimum);
  const mean = Math.max(0, Math.min(...r.mean_values) - r.optimum);
  // BBOB: also the best after 10·d evaluations, the small budget of the comparison.
  const best10 = ab.setting ? Math.max(0, Math.min(...r.values.slice(0, 10 * j.dim)) - r.optimum) : undefined;
  return { label: j.variant.label, method: j.method, fn: `${j.fn}:${j.dim}`, seed: j.seed, best, best10, mean, msPerGen: r.timings.total_ms / r.timings.updates, provenance: PROVENANCE };
}

const TARGETS = Array.from({ length: 11 }, (_, i) => 10 ** (2 - i));

/** BBOB cells: the median of log10(f − f_opt) over instances (10^−8 is the last target). */
function medianLog10(xs: number[]): string {
  const l = xs.map((x) => Math.log10(Math.max(x, 1e-9))).sort((a, b) => a - b);
  const m = l.length % 2 ? l[(l.length - 1) / 2] : 0.5 * (l[l.length / 2 - 1] + l[l.length / 2]);
  return m <= -9 ? '≤−9' : m.toFixed(1);
}

function lnMean(xs: number[]): string {
  const m = xs.reduce((s, x) => s + x, 0) / xs.length;
  return m <= 4.2e-18 ? '≤−40' : Math.log(m).toFixed(2);
}

function report(rows: Record<string, any>[]): string {
  const labels = [...new Set(rows.map((r) => `${r.label} · ${r.method}`))];
  const fnames = [...new Set(rows.map((r) => r.fn as string))];
  const budget = ab.setting?.budgetPerDim ? `${ab.setting.budgetPerDim}·d` : '153';
  const metric = ab.setting ? 'median log10(f − f_opt) of the best queried point' : 'ln mean regret, best-queried point (mean-scored)';
  const lines = [`ablation "${name}": ${metric} at ${budget} evaluations over ${seeds} ${ab.setting ? 'instances' : 'seeds'}`, '', `| function | ${labels.join(' | ')} |`, `|---|${labels.map(() => '---').join('|')}|`];
  for (const f of fnames) {
    const cells = labels.map((l) => {
      const rs = rows.filter((r) => r.fn === f && `${r.label} · ${r.method}` === l);
      if (!rs.length) return '–';
      return ab.setting ? medianLog10(rs.map((r) => r.best)) : `${lnMean(rs.map((r) => r.best))} (${lnMean(rs.map((r) => r.mean))})`;
    });
    lines.push(`| ${f} | ${cells.join(' | ')} |`);
  }
  if (ab.setting) {
    // COCO's score: the share of (run, target) pairs reached, targets f − f_opt ≤ 10^2 … 10^−8.
    const shares = (key: 'best' | 'best10') => labels.map((l) => {
      const rs = rows.filter((r) => `${r.label} · ${r.method}` === l);
      const hit = rs.reduce((s, r) => s + TARGETS.filter((t) => r[key] <= t).length, 0);
      return `${((100 * hit) / (rs.length * TARGETS.length)).toFixed(1)}%`;
    });
    lines.push(`| targets reached | ${shares('best').join(' | ')} |`);
    if (rows.every((r) => typeof r.best10 === 'number')) lines.push(`| targets reached at 10·d | ${shares('best10').join(' | ')} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  if (v.shard && v.jsonl) {
    const [k, n] = v.shard.split('/').map(Number);
    jobs.forEach((j, i) => {
      if (i % n === k) appendFileSync(v.jsonl!, `${JSON.stringify(runJob(j))}\n`);
    });
    return;
  }
  const out = v.out ?? 'bench-results/ablations';
  mkdirSync(out, { recursive: true });
  const workers = Number(v.workers ?? 2);
  const tag = `${name}${v.variants ? `.v${v.variants.replace(/,/g, '-')}` : ''}${seedOffset ? `.s${seedOffset}` : ''}`;
  const files = Array.from({ length: workers }, (_, k) => join(out, `${tag}.shard${k}.jsonl`));
  files.forEach((f) => writeFileSync(f, ''));
  const self = fileURLToPath(import.meta.url);
  const passthrough = process.argv.slice(2).filter((a, i, all) => !['--workers', '--out'].includes(a) && !['--workers', '--out'].includes(all[i - 1]));
  await Promise.all(
    files.map((f, k) => new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, ['--import', 'tsx', self, ...passthrough, '--shard', `${k}/${workers}`, '--jsonl', f], { stdio: 'inherit', env: { ...process.env, ABLATION_COMMAND: COMMAND } });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`shard ${k} exited with ${code}`))));
    })),
  );
  const rows = files.flatMap((f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)));
  writeFileSync(join(out, `${tag}.jsonl`), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  const origin = `Command: \`${COMMAND}\`\n${describeProvenance(rows.map((r) => r.provenance as Provenance | undefined))}`;
  const md = `${report(rows)}\n\n${origin}`;
  writeFileSync(join(out, `${tag}.md`), `${md}\n`);
  console.log(md);
}

void main();
