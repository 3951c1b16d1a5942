/**
 * The loop's commits on a writer thread. With synchronous=FULL every commit waits for an fsync of
 * the WAL (milliseconds on most disks); better-sqlite3 is synchronous, so on the main thread that
 * wait froze the event loop: no request was parsed, no answer sent, no other study served while
 * the disk flushed. On a thread of its own (a second connection to the same file) the wait
 * overlaps with everything else, and commits that queue meanwhile share the next transaction and
 * fsync: the thread groups them (group-commit.ts, as PostgreSQL's are, on the thread so that it
 * starts the next group as soon as the last one is written, whatever the event loop is doing) and
 * applies a group in one transaction (commit-worker.ts). Durability is unchanged: a caller's
 * promise resolves only after the COMMIT containing its write returned, with synchronous=FULL.
 *
 * Started by the first commit or readiness check (the server's /readyz waits for it), so processes
 * that do neither (the CLI) never start it; referenced only while commits are in flight, so an idle
 * one never keeps a process alive.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { CommitResult, GenerationCommit } from '../storage.js';

export interface CommitRequest {
  id: number;
  studyId: string;
  commit: GenerationCommit;
}

/** The new trials travel back as ids only (CommitResult). */
export type CommitReply = { id: number; ok: true; result: CommitResult } | { id: number; ok: false; message: string; code: string | null };

/** An error from the writer thread (the original's class does not cross threads; message and code do). */
export class WriterThreadError extends Error {
  constructor(
    message: string,
    readonly code: string | null,
  ) {
    super(message);
    this.name = 'WriterThreadError';
  }
}

/** URL of tsx's ESM API (its `import` export; resolved by hand, as require.resolve gives the CommonJS one). */
function tsxEsmApi(): string {
  const pkgFile = createRequire(import.meta.url).resolve('tsx/package.json');
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
  return pathToFileURL(path.join(path.dirname(pkgFile), pkg.exports['./esm/api']!.import.default)).href;
}

/**
 * V8's young generation of the writer thread, in MiB (a third of it per semi-space). Unlimited,
 * V8 grows a busy isolate's to 192 MiB on 64-bit Node and keeps it resident; the engine's threads
 * and the event loop are held to the same 48 MiB (docs/capacity.md, "Memory: every cache bounded").
 */
export const WRITER_THREAD_YOUNG_GENERATION_MB = 48;

export class CommitThread {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: CommitResult) => void; reject: (e: unknown) => void }>();
  private exited: Promise<void> | null = null;
  private started: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly file: string,
    private readonly busyTimeoutMs?: number,
  ) {}

  commit(studyId: string, commit: GenerationCommit): Promise<CommitResult> {
    if (this.closed) return Promise.reject(new WriterThreadError('the database is closed', null));
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<CommitResult>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, studyId, commit } satisfies CommitRequest);
    });
  }

  /** Starts the thread if needed and resolves once it has opened the database (readiness probes wait for it). */
  ready(): Promise<void> {
    if (this.closed) return Promise.reject(new WriterThreadError('the database is closed', null));
    this.start();
    return this.started!;
  }

  /** The resource limits the thread runs under (Worker.resourceLimits; empty before it starts), for tests. */
  threadLimits(): { maxYoungGenerationSizeMb?: number } {
    return this.worker?.resourceLimits ?? {};
  }

  /** Lets queued commits finish, then closes the thread's connection and stops it. */
  async close(): Promise<void> {
    this.closed = true;
    if (!this.worker) return;
    this.worker.ref();
    this.worker.postMessage({ close: true });
    await this.exited;
    this.worker = null;
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const here = fileURLToPath(import.meta.url);
    const compiled = here.endsWith('.js');
    const entry = pathToFileURL(here.replace(/commit-thread\.(ts|js)$/, compiled ? 'commit-worker.js' : 'commit-worker.ts')).href;
    // Under tsx (npm start, tests) the worker is TypeScript: it registers tsx's loader itself
    // before importing it (a worker's --import loader is not in place for its own entry).
    const load = compiled ? `import(${JSON.stringify(entry)})` : `import(${JSON.stringify(tsxEsmApi())}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    const worker = new Worker(load, { eval: true, workerData: { file: this.file, busyTimeoutMs: this.busyTimeoutMs }, resourceLimits: { maxYoungGenerationSizeMb: WRITER_THREAD_YOUNG_GENERATION_MB } });
    worker.unref();
    let failure = '';
    // Surfaces through 'exit', in the pending commits' rejections.
    worker.on('error', (err) => (failure = `: ${err.message}`));
    let markStarted!: () => void;
    let markFailed!: (err: Error) => void;
    this.started = new Promise<void>((resolve, reject) => {
      markStarted = resolve;
      markFailed = reject;
    });
    this.started.catch(() => {}); // awaited by ready() when someone asks
    worker.on('message', (replies: CommitReply[] | { ready: true }) => {
      if (!Array.isArray(replies)) return markStarted();
      for (const r of replies) {
        const p = this.pending.get(r.id);
        if (!p) continue;
        this.pending.delete(r.id);
        if (r.ok) p.resolve(r.result);
        else p.reject(new WriterThreadError(r.message, r.code));
      }
      if (this.pending.size === 0) worker.unref();
    });
    this.exited = new Promise((resolve) =>
      worker.once('exit', (code) => {
        const stopped = new WriterThreadError(`the database writer thread stopped (exit code ${code})${failure}`, null);
        markFailed(stopped);
        // Unanswered commits fail (a 500, as if the process had died before answering; their
        // outcome is unknown, and an identical retry is a no-op); the next commit starts a new thread.
        for (const p of this.pending.values()) p.reject(stopped);
        this.pending.clear();
        if (this.worker === worker) this.worker = null;
        resolve();
      }),
    );
    this.worker = worker;
    return worker;
  }
}
