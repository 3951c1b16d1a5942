/**
 * The real server process (src/server.ts through tsx) on a free loopback port, for end-to-end tests
 * and benchmarks: spawn, wait for /readyz (as long as the process makes progress: see waitReady),
 * and stop it (SIGTERM for a clean exit, SIGKILL for a crash). No test-framework imports, so the
 * benchmarks can use it too.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface ServerProcess {
  base: string;
  child: ChildProcess;
  pid: number;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Sends `signal` and waits for the process to be gone. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  /** Extra environment (PORT, HOST and DATABASE_PATH are set from the arguments). */
  env?: Record<string, string>;
  /** Where the server's stderr goes: 'ignore' (default) or 'inherit' (benchmarks show crashes). */
  stderr?: 'ignore' | 'inherit';
  /** The readiness stall window (see waitReady); by default READY_STALL_MS scaled by the load. */
  readyTimeoutMs?: number;
  /** Extra node flags before the script, e.g. --cpu-prof to profile the server. */
  nodeArgs?: string[];
}

/** A server child process whose output is kept, for tests that read its logs or its refusal to start. */
export interface SpawnedServer {
  child: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  out(): string;
  err(): string;
}

/**
 * Spawns the server (or another entry point, e.g. `bin/probnes.js serve`) from the repository root
 * with exactly `env` on top of the test defaults, capturing stdout and stderr. No port or database
 * is chosen here: the tests of start-up refusals need to control them.
 */
export function spawnServer(env: Record<string, string>, argv = ['--import', 'tsx', 'src/server.ts']): SpawnedServer {
  const child = spawn(process.execPath, argv, {
    cwd: ROOT,
    env: { ...process.env, LOG_PRETTY: 'false', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, out: () => stdout, err: () => stderr };
}

/**
 * How much slower than an idle machine this one runs now: the 1-minute load average per core, from 1
 * (idle or lightly used) to 8. A server start that takes 3 s idle took 14–47 s at load 15–20 on two
 * cores, so fixed waits either fail under load or hide hangs when idle.
 */
export function loadFactor(): number {
  const cores = Math.max(1, os.availableParallelism?.() ?? os.cpus().length);
  return Math.min(8, Math.max(1, os.loadavg()[0]! / cores));
}

/** `ms` scaled by loadFactor(): test timeouts around server starts. */
export function scaledMs(ms: number): number {
  return Math.round(ms * loadFactor());
}

/** The longest a server may go without using any CPU while starting before it counts as hung. */
export const READY_STALL_MS = 60_000;
/** The longest a start may take while it still makes progress. */
export const READY_MAX_MS = 300_000;
/** Timeout of a test that starts one server: the longest start, and a minute for the test itself. */
export const E2E_TIMEOUT_MS = READY_MAX_MS + 60_000;

export interface ReadyOptions {
  /** The server's process id: while its CPU time grows it is making progress (Linux; elsewhere the stall window is the deadline). */
  pid?: number;
  /** Fail after this long without progress (default READY_STALL_MS, scaled by the load). */
  stallMs?: number;
  /** Fail after this long in any case (default READY_MAX_MS). */
  maxMs?: number;
}

/**
 * Polls `${base}/readyz` until it answers 200. Throws when the process exits first, when it has made
 * no progress (no CPU time used) for the stall window, or after `maxMs`: a generous deadline for a
 * loaded machine, which still fails fast on a server that died or hangs idle. A number is taken as
 * the stall window (the older fixed-timeout form).
 */
export async function waitReady(base: string, exited: Promise<unknown>, opts: ReadyOptions | number = {}): Promise<void> {
  const o = typeof opts === 'number' ? { stallMs: opts } : opts;
  const stallMs = o.stallMs ?? scaledMs(READY_STALL_MS);
  const maxMs = Math.max(o.maxMs ?? READY_MAX_MS, stallMs);
  let gone = false;
  void exited.then(() => (gone = true));
  const start = Date.now();
  let lastProgress = start;
  let cpu = o.pid === undefined ? null : await processCpuSeconds(o.pid);
  while (!gone) {
    try {
      if ((await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) })).ok) return;
    } catch {
      // not listening yet, or too busy to answer within 5 s
    }
    const now = Date.now();
    const used = o.pid === undefined ? null : await processCpuSeconds(o.pid);
    if (used !== null && cpu !== null && used > cpu) lastProgress = now;
    cpu = used;
    if (now - lastProgress > stallMs) throw new Error(`server did not become ready: no progress for ${Math.round((now - lastProgress) / 1000)} s (CPU time ${used ?? 'unknown'} s)`);
    if (now - start > maxMs) throw new Error(`server did not become ready within ${Math.round(maxMs / 1000)} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server exited before it was ready');
}

export async function startServer(databasePath: string, opts: StartOptions = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), '--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: 'warn', LOG_PRETTY: 'false', ...opts.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_PATH: databasePath },
    stdio: ['ignore', 'ignore', opts.stderr ?? 'ignore'],
  });
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      exitCode = code;
      resolve(code);
    }),
  );
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (exitCode === undefined) child.kill(signal);
    return exited;
  };
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitReady(base, exited, { pid: child.pid!, ...(opts.readyTimeoutMs !== undefined ? { stallMs: opts.readyTimeoutMs } : {}) });
  } catch (err) {
    await stop('SIGKILL');
    throw exitCode === undefined || exitCode === null ? err : new Error(`server exited with code ${exitCode} before it was ready`);
  }
  return { base, child, pid: child.pid!, exited, stop };
}

/**
 * A Linux process's resident size (/proc/<pid>/status), in MiB: the total, its peak, and its three parts: anonymous
 * memory (heaps, malloc's arenas, thread stacks), file pages (the binary, libraries) and shared memory (SQLite's
 * WAL index). Null elsewhere.
 */
export async function processMemory(pid: number): Promise<{ rssMiB: number; peakRssMiB: number; anonMiB: number; fileMiB: number; shmemMiB: number } | null> {
  const fs = await import('node:fs/promises');
  try {
    const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
    const kib = (key: string) => Number(/^\S+:\s+(\d+) kB/m.exec(status.split('\n').find((l) => l.startsWith(`${key}:`)) ?? '')?.[1] ?? NaN);
    return { rssMiB: kib('VmRSS') / 1024, peakRssMiB: kib('VmHWM') / 1024, anonMiB: kib('RssAnon') / 1024, fileMiB: kib('RssFile') / 1024, shmemMiB: kib('RssShmem') / 1024 };
  } catch {
    return null;
  }
}

/** CPU time (user + system, all threads) a Linux process has used so far, in seconds (/proc/<pid>/stat); null elsewhere. */
export async function processCpuSeconds(pid: number): Promise<number | null> {
  const fs = await import('node:fs/promises');
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15, in clock ticks (100 Hz on Linux).
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return null;
  }
}
