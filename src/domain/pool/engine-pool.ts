/**
 * Where engine calls run. `WorkerEngineRunner` uses a piscina pool of worker threads so a GP fit
 * never blocks the event loop (health checks and other studies stay responsive);
 * `InlineEngineRunner` runs the same code on the calling thread (tests, `ENGINE_WORKERS=0`).
 * Both return identical results: the engine is pure and its randomness lives in the state.
 */
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Piscina } from 'piscina';
import { EngineError } from '../../engine/index.js';
import handle, { type WorkerReply } from './engine-worker.js';
import type { EngineResult, EngineTask } from './engine-tasks.js';
import { DEFAULT_FAIRNESS, FairScheduler, type EngineCaller, type FairnessLimits } from './fair-runner.js';

export interface EngineRunner {
  /** `caller`: whose work this is, for fair scheduling (FairEngineRunner); calls without one are not queued. */
  run(task: EngineTask, caller?: EngineCaller): Promise<{ result: EngineResult; ms: number }>;
  close(): Promise<void>;
}

/**
 * The server's runner: calls with a caller go through the fair scheduler (fair-runner.ts), the
 * others (study creation's cheap init, tools) straight to the inner runner.
 */
export class FairEngineRunner implements EngineRunner {
  readonly scheduler: FairScheduler;

  constructor(
    private readonly inner: EngineRunner,
    limits: FairnessLimits = DEFAULT_FAIRNESS,
  ) {
    const laned = inner instanceof LanedEngineRunner ? inner : null;
    this.scheduler = new FairScheduler(
      (task) => inner.run(task),
      limits,
      laned ? (task) => laned.runLight(task) : undefined,
      laned ? (task) => laned.runViews(task) : undefined,
    );
  }

  run(task: EngineTask, caller?: EngineCaller) {
    return caller ? this.scheduler.run(task, caller) : this.inner.run(task);
  }

  close() {
    return this.inner.close();
  }
}

function unwrap(reply: WorkerReply): { result: EngineResult; ms: number } {
  if (reply.ok) return { result: reply.result, ms: reply.ms };
  if (reply.engine) throw new EngineError(reply.code, reply.message);
  throw new Error(reply.message);
}

export class InlineEngineRunner implements EngineRunner {
  async run(task: EngineTask) {
    return unwrap(handle(task));
  }
  async close() {}
}

/**
 * V8's young generation of each engine thread, in MiB (two semi-spaces and the space for new large
 * objects: a third of it per semi-space). Without a limit V8 grows a busy thread's semi-spaces to
 * 64 MiB each on 64-bit Node (no pointer compression): 128 MiB and more per thread that stays
 * resident after a burst of engine calls and is given back only now and then, so that the
 * process's RSS rose and fell by hundreds of MiB under a steady load. 48 MiB (16 MiB semi-spaces,
 * V8's own default before it grew them) costs more frequent scavenges, which are cheap for the
 * engine's short-lived temporaries; the old generation is not limited (a study's largest model is
 * bounded by STUDY_COST_MAX instead, docs/capacity.md).
 */
export const ENGINE_THREAD_YOUNG_GENERATION_MB = 48;

export class WorkerEngineRunner implements EngineRunner {
  private readonly pool: Piscina;

  /**
   * `nice`: the threads' scheduling priority (Linux; engine-worker.ts), e.g. the heavy lane's;
   * `minThreads`: threads kept while idle (0: started on the first call, ended after a minute idle).
   */
  constructor(threads: number, opts: { nice?: number; minThreads?: number } = {}) {
    const here = fileURLToPath(import.meta.url);
    const compiled = here.endsWith('.js');
    const filename = here.replace(/engine-pool\.(ts|js)$/, compiled ? 'engine-worker.js' : 'engine-worker.ts');
    this.pool = new Piscina({
      filename,
      minThreads: Math.min(opts.minThreads ?? 1, Math.max(1, threads)),
      maxThreads: Math.max(1, threads),
      idleTimeout: 60_000,
      workerData: { nice: opts.nice ?? null },
      resourceLimits: { maxYoungGenerationSizeMb: ENGINE_THREAD_YOUNG_GENERATION_MB },
      // Under tsx (npm start, tests) the worker is TypeScript and needs the same loader, named by
      // absolute URL: a bare 'tsx' resolves from the working directory, which may be anywhere.
      execArgv: compiled ? [] : ['--import', pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href],
    });
  }

  async run(task: EngineTask) {
    return unwrap((await this.pool.run(task)) as WorkerReply);
  }

  /** The resource limits each thread runs under (Worker.resourceLimits), for tests. */
  threadLimits(): Array<{ maxYoungGenerationSizeMb?: number; maxOldGenerationSizeMb?: number }> {
    return this.pool.threads.map((t) => t.resourceLimits ?? {});
  }

  async close() {
    await this.pool.destroy();
  }
}

/** Niceness of the heavy lane's threads: the event loop and the light lane run first on a busy machine. */
export const HEAVY_NICE = 10;
/**
 * Niceness of the model views' thread, the lowest: a dashboard's plots take the CPU that the
 * optimisation loops (heavy lane included), the light lane and the event loop leave.
 */
export const VIEWS_NICE = 19;

/**
 * Three pools: heavy calls (run), light ones (runLight) and model views (runViews) never share a
 * thread (fair-runner.ts); without a views pool, views run on the heavy one.
 */
export class LanedEngineRunner implements EngineRunner {
  constructor(
    private readonly heavy: EngineRunner,
    private readonly light: EngineRunner,
    private readonly views: EngineRunner = heavy,
  ) {}

  run(task: EngineTask) {
    return this.heavy.run(task);
  }

  runLight(task: EngineTask) {
    return this.light.run(task);
  }

  runViews(task: EngineTask) {
    return this.views.run(task);
  }

  async close() {
    await Promise.all([...new Set([this.heavy, this.light, this.views])].map((r) => r.close()));
  }
}

/**
 * `threads` workers for heavy calls, at a lower priority (HEAVY_NICE); one worker of its own for
 * the light lane (fair-runner.ts), so that a model-free method's millisecond calls never wait
 * behind a GP fit nor for the CPU it takes; and one for model views at the lowest priority
 * (VIEWS_NICE), started on the first view, so that a view of seconds never holds a heavy slot.
 * 0: inline.
 */
export function createEngineRunner(threads: number): EngineRunner {
  return threads > 0
    ? new LanedEngineRunner(new WorkerEngineRunner(threads, { nice: HEAVY_NICE }), new WorkerEngineRunner(1), new WorkerEngineRunner(1, { nice: VIEWS_NICE, minThreads: 0 }))
    : new InlineEngineRunner();
}
