/**
 * waitReady (test/helpers/server-process.ts) waits for a server as long as it makes progress, so a
 * slow start on a loaded machine is not mistaken for a hang, and still fails fast on a process that
 * sits idle or exits. Child processes stand in for the server: one busy for a while before it
 * listens (longer than the stall window), one idle that never listens, one that exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { waitReady } from '../helpers/server-process.js';

const children: ChildProcess[] = [];
afterEach(() => {
  while (children.length) children.pop()!.kill('SIGKILL');
});

function child(script: string): { pid: number; exited: Promise<unknown> } {
  const c = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  children.push(c);
  return { pid: c.pid!, exited: new Promise((resolve) => c.on('exit', resolve)) };
}

const STALL_MS = 1500;

describe('waitReady', () => {
  it('waits past the stall window for a process that keeps using CPU, until it answers', async () => {
    const port = await freePort();
    // Busy for 4 s (over twice the stall window), then ready.
    const c = child(`const end = Date.now() + 4000; while (Date.now() < end) {}
      require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1');`);
    const t = Date.now();
    await waitReady(`http://127.0.0.1:${port}`, c.exited, { pid: c.pid, stallMs: STALL_MS, maxMs: 60_000 });
    expect(Date.now() - t).toBeGreaterThan(STALL_MS);
  }, 90_000);

  it('gives up on a process that makes no progress, after the stall window rather than a long deadline', async () => {
    const port = await freePort();
    const c = child('setTimeout(() => {}, 120000);');
    const t = Date.now();
    await expect(waitReady(`http://127.0.0.1:${port}`, c.exited, { pid: c.pid, stallMs: STALL_MS, maxMs: 60_000 })).rejects.toThrow(/no progress/);
    expect(Date.now() - t).toBeLessThan(30_000);
  }, 90_000);

  it('fails at once when the process exits', async () => {
    const port = await freePort();
    const c = child('process.exit(3)');
    await expect(waitReady(`http://127.0.0.1:${port}`, c.exited, { pid: c.pid, stallMs: 30_000 })).rejects.toThrow(/exited before it was ready/);
  }, 90_000);
});
