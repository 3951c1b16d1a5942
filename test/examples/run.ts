/** Running an example as a user would (`node --import tsx examples/…`), and a served test app for it to talk to. */
import { spawn } from 'node:child_process';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { makeTestApp } from '../helpers/app.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** Runs `file` (relative to the repository root) with `env` over the process environment; its exit code and stdout + stderr. */
export function runExample(file: string, env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** A test app listening on a free loopback port for the enclosing describe block; `url` once started. */
export function servedTestApp(): { url: string } {
  let app: FastifyInstance;
  const server = { url: '' };
  beforeAll(async () => {
    app = (await makeTestApp()).app;
    server.url = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
  });
  return server;
}
