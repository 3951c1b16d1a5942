/**
 * Preloaded into the server by bench:soak only (`node --expose-gc --import tsx --import
 * ./bench/lib/soak-gc-hook.ts src/server.ts`), never part of the server itself: on SIGUSR2 it
 * runs a full garbage collection and writes the main thread's memory figures after it, as one
 * JSON line, to the file named by SOAK_GC_REPORT. The bench compares the heap after a forced GC
 * at the start of the load with the heap after one at its end: without a forced collection the
 * heap read from /metrics includes garbage V8 has not collected yet, and says little about what
 * the server retains. A signal reaches the process from its own user only, and the handler is
 * installed only with this preload, so nothing else can trigger a collection.
 *
 * With SOAK_HEAP_SNAPSHOT_DIR set it also writes a heap snapshot there after the collection
 * (what retains memory, when the figures say something does).
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import v8 from 'node:v8';

const report = process.env.SOAK_GC_REPORT;
const gc = (globalThis as { gc?: () => void }).gc;
if (report && gc) {
  let n = 0;
  process.on('SIGUSR2', () => {
    const t0 = performance.now();
    // Twice: objects with finalizers or weak references freed by the first are collected by the second.
    gc();
    gc();
    const ms = performance.now() - t0;
    const m = process.memoryUsage();
    const h = v8.getHeapStatistics();
    let snapshot: string | null = null;
    const dir = process.env.SOAK_HEAP_SNAPSHOT_DIR;
    if (dir) snapshot = v8.writeHeapSnapshot(join(dir, `soak-${process.pid}-${++n}.heapsnapshot`));
    appendFileSync(report, `${JSON.stringify({ at: new Date().toISOString(), pid: process.pid, gcMs: ms, rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, mallocedMemory: h.malloced_memory, snapshot })}\n`);
  });
}
