/**
 * How the process's JavaScript heaps grow (docs/capacity.md, "Memory: every cache bounded").
 *
 * After each full collection V8 sets the next one's trigger at the live size times a growing factor it
 * derives from the collector's speed and the allocation rate: up to 4× when the server allocates fast (a
 * sustained burst of requests), and the pages committed for that are kept once the burst is over. Under a
 * steady load the server's live heap stays near 55 MiB, but the event loop's old generation was sized for
 * 220 MiB after such a burst, and the resident size stepped up by 130 MiB and stayed
 * (bench-results/published/2026-11-28-soak-2). A fixed factor of 1 + HEAP_GROWING_PERCENT/100 bounds the
 * heap by the live size instead of by the rate. It means more frequent full collections, mostly concurrent:
 * measured by `npm run bench:soak`, the main thread's GC took 0.052–0.055 s per 1,000 requests with the factor
 * and without it (bench-results/published/2026-11-29-soak-final, …-soak-default).
 *
 * V8 reads the factor whenever it recomputes a limit, so setting it here, before the server allocates,
 * governs the event loop and every worker thread started after (the flag is the process's), however the
 * server is started: `npm start`, the Docker image or `probnes serve` (NODE_OPTIONS refuses this flag).
 */
import v8 from 'node:v8';

/** The V8 flag for a growing percent, or null to leave V8's own rule (0). */
export function heapGrowingFlag(percent: number): string | null {
  if (!Number.isInteger(percent) || percent < 0) throw new RangeError(`heap growing percent must be a non-negative integer, got ${percent}`);
  return percent === 0 ? null : `--heap-growing-percent=${percent}`;
}

/** Applies the policy to this process (call once, at start). */
export function applyHeapPolicy(percent: number, setFlags: (flags: string) => void = v8.setFlagsFromString): void {
  const flag = heapGrowingFlag(percent);
  if (flag) setFlags(flag);
}
