/**
 * The tasks the benchmark runner knows: the engine's registry plus tasks that exist only for
 * benchmarking because they need the machine (Swimmer runs MuJoCo as a child process, the latent-space
 * tasks read trained weights from a file: the pure engine must do neither). Looked up by name, so
 * worker threads receive only the name.
 */
import { BENCHMARKS, getBenchmark, type Benchmark, type BenchmarkDef } from '../../src/engine/benchmarks/index.js';
import { LATENT_TASKS } from '../latent/task.js';
import { SWIMMER } from '../swimmer/task.js';

const BENCH_ONLY: Readonly<Record<string, BenchmarkDef>> = Object.fromEntries([SWIMMER, ...LATENT_TASKS].map((t) => [t.name, t]));
export const BENCH_TASKS: Readonly<Record<string, BenchmarkDef>> = { ...BENCHMARKS, ...BENCH_ONLY };

/** The engine's getBenchmark, extended to the bench-only tasks. */
export function getTask(name: string, d?: number, instance?: number): Benchmark {
  const own = BENCH_ONLY[name];
  if (!own) return getBenchmark(name, d, instance);
  if (instance !== undefined) throw new RangeError(`benchmark ${name} has no instances`);
  return own.make(d ?? own.defaultDim);
}
