/**
 * docker/Caddyfile.scale, run by the machine's caddy (Debian's `caddy` package; skipped where there is
 * none) in front of three stub replicas that answer with their own name: every request of one study
 * (suggestions, observations, trial actions, the study itself) goes to the same replica, studies spread
 * over all three, and when a replica stops answering its studies go to the others, each still to one.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const hasCaddy = spawnSync('caddy', ['version']).status === 0;

interface Stub {
  name: string;
  port: number;
  server: http.Server;
}

async function stub(name: string): Promise<Stub> {
  const port = await freePort();
  const server = http.createServer((req, res) => {
    // /readyz answers 200 like a ready replica; everything else says who served it.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ replica: name, url: req.url }));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return { name, port, server };
}

describe.skipIf(!hasCaddy)('Caddy in front of the replicas (docker/Caddyfile.scale)', () => {
  const stubs: Stub[] = [];
  let caddy: ChildProcess;
  let base = '';

  beforeAll(async () => {
    for (const name of ['r1', 'r2', 'r3']) stubs.push(await stub(name));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    caddy = spawn('caddy', ['run', '--adapter', 'caddyfile', '--config', path.join(ROOT, 'docker/Caddyfile.scale')], {
      env: { ...process.env, PROBNES_LISTEN: `127.0.0.1:${port}`, PROBNES_UPSTREAMS: stubs.map((s) => `127.0.0.1:${s.port}`).join(' ') },
      stdio: 'ignore',
    });
    for (let i = 0; i < 100; i++) {
      try {
        if ((await fetch(`${base}/readyz`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('caddy did not start');
  });
  afterAll(async () => {
    caddy?.kill('SIGTERM');
    for (const s of stubs) s.server.close();
  });

  const served = async (method: string, url: string) => ((await (await fetch(base + url, { method })).json()) as { replica: string }).replica;
  /** The replica each of a study's routes went to. */
  const routes = async (id: string) =>
    Promise.all([
      served('GET', `/v1/studies/${id}/suggestions?count=1&client_id=a`),
      served('POST', `/v1/studies/${id}/observations`),
      served('POST', `/v1/studies/${id}/trials/7/heartbeat`),
      served('GET', `/v1/studies/${id}`),
      served('GET', `/v1/studies/${id}/suggestions?count=4&client_id=b`),
    ]);
  const ids = Array.from({ length: 30 }, (_, i) => `3f2b9c1e-0000-4000-8000-${String(i).padStart(12, '0')}`);

  it("sends every request of a study to one replica, and spreads the studies over all of them; a down replica's studies move to the others", async () => {
    const owner = new Map<string, string>();
    for (const id of ids) {
      const r = await routes(id);
      expect(new Set(r).size, `${id}: ${r.join(' ')}`).toBe(1);
      owner.set(id, r[0]!);
    }
    // 30 studies over 3 replicas: each gets some (a hash that sent them all to one would fail here).
    expect(new Set(owner.values())).toEqual(new Set(['r1', 'r2', 'r3']));

    // r2 stops answering (a crashed replica: connections refused).
    const r2 = stubs[1]!;
    await new Promise<void>((r) => r2.server.close(() => r()));
    r2.server.closeAllConnections();
    for (const id of ids) {
      const r = await routes(id);
      expect(new Set(r).size, `${id}: ${r.join(' ')}`).toBe(1);
      expect(r[0]).not.toBe('r2');
      // Studies of the live replicas stay where they were.
      if (owner.get(id) !== 'r2') expect(r[0]).toBe(owner.get(id));
    }
  });
});
