/**
 * The tasks the benchmark runner knows: the engine's registry plus tasks that exist only for
 * benchmarking because they need the machine (Swimmer runs MuJoCo as a child process, which the
 * pure engine must not do). Looked up by name, so worker threads receive only the name.
 */
import { BENCHMARKS, getBenchmark, type Benchmark, type BenchmarkDef } from '../../src/engine/benchmarks/index.js';
import { SWIMMER } from '../swimmer/task.js';

const BENCH_ONLY: Readonly<Record<string, BenchmarkDef>> = { [SWIMMER.name]: SWIMMER };
export const BENCH_TASKS: Readonly<Record<string, BenchmarkDef>> = { ...BENCHMARKS, ...BENCH_ONLY };

/** The engine's getBenchmark, extended to the bench-only tasks. */
export function getTask(name: string, d?: number, instance?: number): Benchmark {
  const own = BENCH_ONLY[name];
  if (!own) return getBenchmark(name, d, instance);
  if (instance !== undefined) throw new RangeError(`benchmark ${name} has no instances`);
  return own.make(d ?? own.defaultDim);
}
