/**
 * A tiny worker-thread pool for benchmark jobs: N workers, each fed the next job as soon as it
 * answers (jobs have very different costs: random takes ms, ProbNES seconds).
 *
 * The workers run TypeScript. Passing `execArgv: ['--import', 'tsx']` is not enough on Node 20 (the
 * worker's entry module is resolved before tsx's hooks apply: ERR_UNKNOWN_FILE_EXTENSION), so each
 * worker starts from a tiny JavaScript bootstrap that registers tsx's ESM hooks through its API
 * (`tsx/esm/api` register()) and only then imports worker.ts. Both URLs are absolute, so this works
 * from any working directory, under `npm run bench:paper` (= `tsx bench/paper.ts`) or plain node.
 */
import { Worker } from 'node:worker_threads';
import type { RunSpec } from './run.js';
import type { WorkerReply } from './worker.js';

export async function runPool(jobs: readonly RunSpec[], workers: number, onReply: (r: WorkerReply) => void): Promise<void>;
/** The same pool over another worker module (`entry`, a .ts file that answers each job with one reply). */
export async function runPool<J, R>(jobs: readonly J[], workers: number, onReply: (r: R) => void, entry: URL): Promise<void>;
export async function runPool<J, R>(jobs: readonly J[], workers: number, onReply: (r: R) => void, entry = new URL('./worker.ts', import.meta.url)): Promise<void> {
  const queue = [...jobs];
  const n = Math.max(1, Math.min(workers, queue.length));
  const bootstrap = [
    `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))})`,
    `.then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.href)}); })`,
    `.catch((e) => { throw e; });`,
  ].join('');
  await Promise.all(
    Array.from({ length: n }, () =>
      new Promise<void>((resolve, reject) => {
        const w = new Worker(bootstrap, { eval: true });
        const next = (): void => {
          const job = queue.shift();
          if (job) w.postMessage(job);
          else void w.terminate().then(() => resolve());
        };
        w.on('message', (r: R) => {
          onReply(r);
          next();
        });
        w.on('error', reject);
        w.on('online', next);
      }),
    ),
  );
}
