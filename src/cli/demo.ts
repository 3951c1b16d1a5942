/**
 * `probnes demo`: the whole service in one command. Starts the server in this process on a free
 * loopback port (open, no keys: it never leaves 127.0.0.1), creates a study on one of the engine's
 * test functions and runs the suggest → evaluate → observe loop against its own HTTP API, exactly as
 * a remote client would. Prints the best point, its regret (the test functions know f*) and the
 * dashboard URL; with --keep-running it stays up so the dashboard can be opened.
 *
 * A multi-objective test function (ZDT1–3, DTLZ2, the two-bar truss with its constraint) makes a study
 * of several objectives: the demo then prints the server's Pareto front, its hypervolume beside the true
 * front's (known in closed form), and how many evaluations were feasible. Which points are on the front
 * is the server's answer (GET /front); the demo never compares objective values itself.
 *
 * A task with a structured space (`model-choice`, demo-spaces.ts: a categorical parameter, conditional
 * ones nested two levels deep, log and stepped ones) makes a study of those parameters; only the methods
 * whose facts say they search categorical parameters are offered, and the best point is printed with the
 * parameters the server reports for it, its active ones.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { EngineRunner } from '../domain/pool/engine-pool.js';
import { categoricalMethods } from '../domain/studies/study-spec.js';
import { BENCHMARKS, benchmarkNames, DEFAULT_METHOD, getStrategy, isMethodName, methodFacts, MULTI_BENCHMARKS, multiBenchmarkNames, registeredMethods, type Benchmark, type MethodName, type MultiBenchmark } from '../engine/index.js';
import { ProbnesClient, ProbnesError, type FrontPage, type Study, type StudySpec } from '../../clients/typescript/src/index.js';
import type { SqliteStorage } from '../storage/sqlite/sqlite-storage.js';
import { intOption, parse, UsageError, type CliIo } from './common.js';
import { DemoProgress, FrontProgress } from './progress.js';
import { SPACE_TASKS, spaceTaskNames, type SpaceTask } from './demo-spaces.js';

export const DEMO_USAGE = `usage: probnes demo [options]

Starts a server on 127.0.0.1, optimises a test function through its HTTP API with a live progress
bar (on stderr), then prints the best point, its regret and the dashboard URL (on stdout).

options:
  --method NAME       ${registeredMethods().join(', ')} (default ${DEFAULT_METHOD}; for several
                      objectives, the first method that searches them)
  --function NAME     ${benchmarkNames().join(', ')} (default branin)
                      or, with several objectives: ${multiBenchmarkNames().join(', ')}
                      or, with categorical, conditional and stepped parameters: ${spaceTaskNames().join(', ')}
                      (only the methods that search categorical parameters: ${categoricalMethods().join(', ')})
  --dim N             dimension, for functions defined in any dimension (default: the function's)
  --budget N          evaluations (default 60)
  --batch N           points per generation (default 3; cmaes, xnes and snes need >= 2)
  --seed N            the study's random seed (default 7)
  --port N            port to listen on (default 0: a free one)
  --db PATH           SQLite file to keep the study in (default: a temporary file, deleted at exit)
  --keep-running      stay up after the run so the dashboard can be opened; Ctrl-C stops
  -h, --help          this help

examples:
  probnes demo
  probnes demo --method cmaes --function rastrigin --dim 2 --budget 120
  probnes demo --keep-running --port 8090     # then open the printed dashboard URL
  probnes demo --function zdt1 --dim 4 --budget 60   # two objectives: the front and its hypervolume
  probnes demo --function truss2d --budget 60        # two objectives and a constraint
  probnes demo --function model-choice --budget 60   # a model family and its own (conditional, stepped) parameters
`;

const OPTIONS = {
  method: { type: 'string' },
  function: { type: 'string' },
  dim: { type: 'string' },
  budget: { type: 'string' },
  batch: { type: 'string' },
  seed: { type: 'string' },
  port: { type: 'string' },
  db: { type: 'string' },
  'keep-running': { type: 'boolean' },
} as const;

interface DemoArgs {
  method: MethodName;
  bench: Benchmark;
  /** A multi-objective function: the study has its objectives and constraints; `bench` is unused then. */
  multi: MultiBenchmark | null;
  /** A task with a structured space (categorical, conditional, stepped parameters); `bench` is unused then. */
  space: SpaceTask | null;
  budget: number;
  batch: number;
  seed: number;
  port: number;
  db: string | null;
  keepRunning: boolean;
}

function demoArgs(argv: string[], cwd: string): DemoArgs | 'help' {
  const { values } = parse(argv, OPTIONS, 0);
  if (values.help) return 'help';
  const fn = typeof values.function === 'string' ? values.function : 'branin';
  const def = BENCHMARKS[fn];
  const multiDef = MULTI_BENCHMARKS[fn];
  const space = SPACE_TASKS[fn] ?? null;
  if (!def && !multiDef && !space) throw new UsageError(`--function: unknown function ${JSON.stringify(fn)}; one of ${[...benchmarkNames(), ...multiBenchmarkNames(), ...spaceTaskNames()].join(', ')}`);
  const given = typeof values.method === 'string' ? values.method : null;
  if (given !== null && !isMethodName(given)) throw new UsageError(`--method: unknown method ${JSON.stringify(given)}; one of ${registeredMethods().join(', ')}`);
  let multi: MultiBenchmark | null = null;
  let bench = BENCHMARKS.branin!.make(2);
  if (space) {
    if (values.dim !== undefined) throw new UsageError(`--dim: ${fn} has a fixed space of ${space.parameters.length} parameters; leave out --dim`);
  } else if (def) {
    const dim = intOption(values, 'dim', 1, 100, def.defaultDim);
    if (def.dim !== 'any' && dim !== def.dim) throw new UsageError(`--dim: ${fn} is defined only in ${def.dim} dimensions (got ${dim})`);
    bench = def.make(dim);
  } else {
    const dim = intOption(values, 'dim', multiDef!.minDim, 100, multiDef!.defaultDim);
    multi = multiDef!.make(dim);
  }
  let method: MethodName;
  if (multi) {
    const able = multiMethods(multi);
    if (given !== null && !able.includes(given)) throw new UsageError(`--method: ${given} does not search ${multi.name} (${multi.objectives} objectives${multi.constraints > 0 ? ' with constraints' : ''}); one of ${able.join(', ')}`);
    method = given ?? (able.includes(DEFAULT_METHOD) ? DEFAULT_METHOD : able[0]!);
  } else if (space) {
    const able = categoricalMethods();
    if (given !== null && !able.includes(given)) throw new UsageError(`--method: ${given} does not search ${space.name} (it has categorical parameters); one of ${able.join(', ')}`);
    method = given ?? (able.includes(DEFAULT_METHOD) ? DEFAULT_METHOD : able[0]!);
  } else {
    method = given ?? DEFAULT_METHOD;
  }
  const batch = intOption(values, 'batch', 1, 100, 3);
  const minBatch = getStrategy(method).minBatch;
  if (batch < minBatch) throw new UsageError(`--batch: ${method} ranks a generation's points and needs at least ${minBatch} (got ${batch})`);
  return {
    method,
    bench,
    multi,
    space,
    budget: intOption(values, 'budget', 1, 100_000, 60),
    batch,
    seed: intOption(values, 'seed', 0, 2 ** 31 - 1, 7),
    port: intOption(values, 'port', 0, 65_535, 0),
    db: typeof values.db === 'string' ? path.resolve(cwd, values.db) : null,
    keepRunning: values['keep-running'] === true,
  };
}

/** A failed call to our own API, in one line: the problem's detail and each field error with its pointer. */
function describeError(err: ProbnesError): string {
  return [err.message, ...err.errors.map((e) => `${e.path} ${e.message}`)].join('; ');
}

/** The study body: x1…xd over the function's customary box; its own prior if the task has one. */
function studyBody(a: DemoArgs): StudySpec {
  if (a.multi) return multiStudyBody(a.multi, a);
  if (a.space) return spaceStudyBody(a.space, a);
  const b = a.bench;
  return {
    name: `demo ${b.name} ${b.dim}-D (${a.method})`,
    method: a.method,
    batch_size: a.batch,
    seed: a.seed,
    max_trials: a.budget,
    known_optimum: b.optimum,
    parameters: Array.from({ length: b.dim }, (_, i) => ({
      name: `x${i + 1}`,
      type: 'float' as const,
      bounds: [b.bounds.lower[i], b.bounds.upper[i]],
      // Without a prior the server centres one on the box with the bounds at ±2σ (docs/priors.md).
      ...(b.prior ? { prior: { mean: b.prior.mean[i], std: b.prior.std[i] } } : {}),
    })),
    metadata: { source: 'probnes demo', function: b.name, f_star_source: b.source },
  };
}

/**
 * A study of the task's objectives f1…fM (all minimised, as the tasks define them) and constraints c1…cK,
 * with the reference point the task's true-front hypervolume is stated for, so the two compare.
 */
function multiStudyBody(b: MultiBenchmark, a: DemoArgs): StudySpec {
  return {
    name: `demo ${b.name} ${b.dim}-D (${a.method})`,
    method: a.method,
    batch_size: a.batch,
    seed: a.seed,
    max_trials: a.budget,
    parameters: Array.from({ length: b.dim }, (_, i) => ({ name: `x${i + 1}`, type: 'float' as const, bounds: [b.bounds.lower[i], b.bounds.upper[i]] })),
    objectives: Array.from({ length: b.objectives }, (_, i) => ({ name: `f${i + 1}`, direction: 'minimize' as const })),
    ...(b.constraints > 0 ? { constraints: Array.from({ length: b.constraints }, (_, i) => ({ name: `c${i + 1}` })) } : {}),
    reference_point: [...b.referencePoint],
    metadata: { source: 'probnes demo', function: b.name, true_front_hypervolume: b.frontHypervolume(), source_of_front: b.source },
  };
}

/** The task's own parameters (conditions, steps and the categorical prior included), with its f* for the regret. */
function spaceStudyBody(t: SpaceTask, a: DemoArgs): StudySpec {
  return {
    name: `demo ${t.name} (${a.method})`,
    method: a.method,
    batch_size: a.batch,
    seed: a.seed,
    max_trials: a.budget,
    known_optimum: t.optimum,
    parameters: t.parameters.map((p) => ({ ...p })),
    metadata: { source: 'probnes demo', function: t.name, optimum: t.optimumPoint, f_star_source: 'defined so (src/cli/demo-spaces.ts)' },
  };
}

/** The methods that search a task's objectives and constraints (the facts the server's 400 at /method is decided by). */
function multiMethods(b: MultiBenchmark): MethodName[] {
  return registeredMethods().filter((m) => methodFacts(m).multiObjective && (b.constraints === 0 || methodFacts(m).constraints));
}

async function optimiseMulti(client: ProbnesClient, studyId: string, b: MultiBenchmark, a: DemoArgs, progress: FrontProgress): Promise<void> {
  const names = Array.from({ length: b.dim }, (_, i) => `x${i + 1}`);
  let completed = 0;
  while (completed < a.budget) {
    const s = await client.suggest(studyId, { count: Math.min(a.batch, a.budget - completed), clientId: 'demo' });
    if (s.trials.length === 0) break;
    const observations = s.trials.map((t) => {
      const { f, c } = b.evaluate(names.map((n) => t.parameters[n] as number));
      // A design the task cannot evaluate (the truss with a bar of section 0 has infinite stress) is reported
      // infeasible: the server keeps it without a value and its methods move away from it.
      if (![...f, ...c].every(Number.isFinite)) return { trial_id: t.trial_id, infeasible: true as const };
      return b.constraints > 0 ? { trial_id: t.trial_id, values: f, constraints: c } : { trial_id: t.trial_id, values: f };
    });
    await client.observe(studyId, observations);
    completed += observations.length;
    // The front's size and hypervolume as the server has them (GET /best of a study of several objectives).
    const best = await client.best(studyId);
    progress.observe(observations.length, best.front?.size ?? 0, best.front?.hypervolume ?? 0);
  }
  progress.finish();
}

function formatValues(names: readonly string[], values: readonly number[]): string {
  return values.map((v, i) => `${names[i]}=${Number(v.toPrecision(6))}`).join(' ');
}

/** The front as the server answers it (its trials in the first objective's order), the hypervolume beside the true front's, feasibility. */
function printFront(io: CliIo, b: MultiBenchmark, front: FrontPage): void {
  const fNames = Array.from({ length: b.objectives }, (_, i) => `f${i + 1}`);
  const evaluated = front.evaluation_count;
  const feasibility = b.constraints > 0 || front.feasible_count < evaluated ? `, ${front.feasible_count} of them feasible` : '';
  io.out(`front: ${front.trials.length} trial${front.trials.length === 1 ? '' : 's'} of ${evaluated} evaluations${feasibility}, by f1:
`);
  const shown = front.trials.slice(0, 12);
  for (const t of shown) {
    io.out(`  trial ${t.trial_id}: ${formatValues(fNames, t.values ?? [])}  at ${formatPoint(t.parameters)}
`);
  }
  if (front.trials.length > shown.length) io.out(`  … and ${front.trials.length - shown.length} more (GET /v1/studies/{id}/front)
`);
  // The declared reference point (the task's); null only while nothing feasible was found.
  const r = front.reference_point?.value ?? [...b.referencePoint];
  const trueHv = b.frontHypervolume(r);
  const share = trueHv > 0 ? ` (${((100 * front.hypervolume) / trueHv).toFixed(1)} %)` : '';
  io.out(`hypervolume: ${front.hypervolume.toPrecision(8)} against r = (${r.join(', ')})${front.reference_point?.derived ? ' (derived)' : ''}; the true front's ${trueHv.toPrecision(8)}${share}
`);
}

async function optimise(client: ProbnesClient, studyId: string, a: DemoArgs, progress: DemoProgress): Promise<void> {
  const names = Array.from({ length: a.bench.dim }, (_, i) => `x${i + 1}`);
  // A structured task reads the parameters by name (the active ones, as handed out); a test function reads x1…xd.
  const f = a.space ? (p: Record<string, number | string | boolean>) => a.space!.evaluate(p) : (p: Record<string, number | string | boolean>) => a.bench.f(names.map((n) => p[n] as number));
  let completed = 0;
  while (completed < a.budget) {
    const s = await client.suggest(studyId, { count: Math.min(a.batch, a.budget - completed), clientId: 'demo' });
    if (s.trials.length === 0) break; // the server says why in `reason` (max_trials_reached, …)
    const observations = s.trials.map((t) => {
      const value = f(t.parameters);
      progress.observe(value);
      return { trial_id: t.trial_id, value };
    });
    await client.observe(studyId, observations);
    completed += observations.length;
  }
  progress.finish();
}

function formatPoint(p: Record<string, number | string | boolean>): string {
  return Object.entries(p)
    .map(([k, v]) => `${k}=${typeof v === 'number' ? Number(v.toPrecision(6)) : String(v)}`)
    .join(' ');
}

/** Resolves on the first SIGINT/SIGTERM. */
function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      process.off('SIGINT', done);
      process.off('SIGTERM', done);
      resolve();
    };
    process.on('SIGINT', done);
    process.on('SIGTERM', done);
  });
}

export async function runDemo(argv: string[], io: CliIo): Promise<number> {
  const cwd = io.cwd ?? process.cwd();
  let args: DemoArgs | 'help';
  try {
    args = demoArgs(argv, cwd);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`probnes demo: ${err.message}\n(see probnes demo --help)\n`);
      return 2;
    }
    throw err;
  }
  if (args === 'help') {
    io.out(DEMO_USAGE);
    return 0;
  }
  // The server side is loaded only now, so that `probnes demo --help` answers without it.
  const [{ default: pino }, { buildApp }, { ConfigError, loadConfig }, { createEngineRunner }, { SqliteStorage }] = await Promise.all([
    import('pino'),
    import('../app.js'),
    import('../config.js'),
    import('../domain/pool/engine-pool.js'),
    import('../storage/sqlite/sqlite-storage.js'),
  ]);
  let workers: number;
  try {
    // Only ENGINE_WORKERS is taken from the environment; the demo picks its own host, port and file.
    workers = loadConfig(io.env, cwd).engineWorkers;
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`probnes: ${err.message}\n`);
      return 1;
    }
    throw err;
  }

  const tmpDir = args.db === null ? fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-demo-')) : null;
  const dbPath = args.db ?? path.join(tmpDir!, 'demo.db');
  let storage: SqliteStorage | null = null;
  let engine: EngineRunner | null = null;
  let app: FastifyInstance | null = null;
  try {
    storage = SqliteStorage.open(dbPath);
    if (await storage.hasActiveApiKeys()) {
      io.err(`probnes demo: ${dbPath} has API keys, and the demo runs without one; give it another --db\n`);
      return 1;
    }
    engine = createEngineRunner(workers);
    // Open (no keys) is safe because the demo listens on loopback only; no rate limit for our own loop.
    // Only errors are logged (to stderr, as JSON lines): the progress bar owns the terminal otherwise.
    const logger = pino({ level: 'error', base: { service: 'probnes-demo' } }, pino.destination(2));
    app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000, rateLimitPerMinute: 0 }, storage, engine, logger, auth: { allowOpen: true } });
    try {
      await app.listen({ host: '127.0.0.1', port: args.port });
    } catch (err) {
      io.err(`probnes demo: cannot listen on 127.0.0.1:${args.port}: ${(err as Error).message}\n`);
      return 1;
    }
    const port = (app.server.address() as { port: number }).port;
    const base = `http://127.0.0.1:${port}`;
    // The demo is a client like any other: the TypeScript client, against its own server.
    const client = new ProbnesClient({ baseUrl: base, userAgent: 'probnes-demo' });

    let study: Study;
    try {
      study = await client.createStudy(studyBody(args));
    } catch (err) {
      // A 4xx here means the options combine into a study the server refuses (e.g. an option range).
      if (err instanceof ProbnesError && err.status !== null && err.status < 500) {
        io.err(`probnes demo: the server refused the study: ${describeError(err)}\n`);
        return 2;
      }
      throw err;
    }
    const dashboard = `${base}/ui/studies/${study.id}`;
    io.err(`server on ${base}, database ${args.db ?? '(temporary)'}\n`);
    if (args.multi) {
      const m = args.multi;
      const what = `${m.objectives} objectives${m.constraints > 0 ? `, ${m.constraints} constraint${m.constraints === 1 ? '' : 's'}` : ''}`;
      io.err(`study ${study.id}: ${study.method} on ${m.name} (${m.dim}-D, ${what}), ${args.budget} evaluations, batches of ${args.batch}\n`);
      if (args.keepRunning) io.err(`dashboard (live): ${dashboard}\n`);
      await optimiseMulti(client, study.id, m, args, new FrontProgress(args.budget, m.frontHypervolume(), io));
      const front = await client.front(study.id);
      if (front.evaluation_count === 0) {
        io.err('probnes demo: no evaluation completed\n');
        return 1;
      }
      printFront(io, m, front);
      io.out(`dashboard: ${dashboard}${args.keepRunning ? '' : '  (the server has stopped; rerun with --keep-running to browse it)'}\n`);
      if (args.keepRunning) {
        io.err('keeping the server up; Ctrl-C stops it\n');
        await untilSignal();
      }
      return 0;
    }
    const optimum = args.space ? args.space.optimum : args.bench.optimum;
    const what = args.space
      ? `${args.space.name} (${args.space.parameters.length} parameters: ${args.space.summary}; f* = ${optimum} at ${formatPoint(args.space.optimumPoint)})`
      : `${args.bench.name} (${args.bench.dim}-D, f* = ${optimum})`;
    io.err(`study ${study.id}: ${study.method} on ${what}, ${args.budget} evaluations, batches of ${args.batch}\n`);
    if (args.keepRunning) io.err(`dashboard (live): ${dashboard}\n`);

    const progress = new DemoProgress(args.budget, optimum, io);
    await optimise(client, study.id, args, progress);

    const best = await client.best(study.id);
    if (!best.observed) {
      io.err('probnes demo: no evaluation completed\n');
      return 1;
    }
    const regret = Math.max(0, best.observed.value - optimum);
    // The parameters the server reports for the trial: on a conditional space, its active ones only.
    io.out(`best point: ${formatPoint(best.observed.parameters)} (trial ${best.observed.trial_id})\n`);
    io.out(`best value: ${best.observed.value.toPrecision(8)}  f* = ${optimum.toPrecision(8)}  regret ${regret.toExponential(3)}\n`);
    io.out(`dashboard: ${dashboard}${args.keepRunning ? '' : '  (the server has stopped; rerun with --keep-running to browse it)'}\n`);
    if (args.keepRunning) {
      io.err('keeping the server up; Ctrl-C stops it\n');
      await untilSignal();
    }
    return 0;
  } catch (err) {
    // The server already logged a 5xx with its request id; the user needs the one-line reason.
    if (err instanceof ProbnesError) {
      io.err(`\nprobnes demo: ${describeError(err)}\n`);
      return 1;
    }
    throw err;
  } finally {
    await app?.close();
    await engine?.close();
    await storage?.close();
    if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}
