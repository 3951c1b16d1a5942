/**
 * Crash safety against the real server process: concurrent clients run the loop (suggestions,
 * single and batched observations by trial id, external points, heartbeats, failures) on several
 * studies while the server is killed with SIGKILL at random moments and restarted on the same
 * database: a SQLite file, and a PostgreSQL database when a server is there (the replicas' storage). Afterwards every trial is read back through the API and checked against what the
 * clients were told:
 *
 * - every observation answered 2xx is there exactly once, COMPLETED, with the acknowledged value;
 * - every trial handed out by a 2xx suggestion is there with the same point (no trial lost);
 * - trial ids are unique and contiguous from 1 (no trial duplicated, none rolled back halfway);
 * - no COMPLETED trial lacks a value, no other state has one, acknowledged failures are FAILED;
 * - every external point stored is one a client sent; trial counts match the trials listed;
 * - every study still answers a suggestion request with a point.
 *
 * A request cut by the kill has an unknown outcome; clients retry the idempotent ones (suggestions
 * give the held trials back, an identical observation or failure is a no-op) and never resend an
 * external point (that would be a second point, legitimately). The random moments come from a
 * seed printed on failure (CRASH_SEED=… reproduces the schedule, not the kernel's timing).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { branin, braninStudy, fastOptions } from '../helpers/loop.js';
import { scaledMs, startServer, type ServerProcess } from '../helpers/server-process.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import type { MethodName } from '../../src/engine/index.js';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-crash-'));
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.stop('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

const SEED = Number(process.env.CRASH_SEED ?? Date.now() % 2 ** 31);
const KILLS = 4;
const CLIENTS = 6;
const STUDIES: [MethodName, number][] = [['prob-cmaes', 3], ['cmaes', 4], ['xnes', 4], ['random', 2]];
const json = { 'content-type': 'application/json' };

/** Park–Miller style LCG: the test's random choices, reproducible from SEED. */
function lcg(seed: number) {
  let s = seed >>> 0 || 1;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

type Observation = { trial_id: number; value: number } | { parameters: Record<string, number>; value: number };
type Trial = { trial_id: number; state: string; parameters: Record<string, number>; value: number | null; source: string };
const key = (study: string, trialId: number) => `${study}/${trialId}`;

/** What the clients were told (2xx) and what they sent without knowing the outcome. */
class Ledger {
  readonly observed = new Map<string, number>();
  readonly handedOut = new Map<string, Record<string, number>>();
  readonly failed = new Set<string>();
  readonly externalAcked = new Map<string, { value: number; parameters: Record<string, number> }>();
  /** Values of external points whose request was cut by a kill: they may or may not be stored. */
  readonly externalUnknown = new Map<string, Set<number>>();
  readonly unexpected: string[] = [];
  networkErrors = 0;
  requests = 0;
}

const pgServer = postgresServer();
const databases: TestDatabase[] = [];
afterAll(async () => {
  for (const d of databases) await d.drop();
});

/** The database each run restarts on: a SQLite file, or (DATABASE_URL) a PostgreSQL database of its own. */
const BACKENDS: [string, () => Promise<{ env: Record<string, string>; studiesStored?: () => Promise<number> }>][] = [
  ['SQLite', async () => ({ env: {} })],
  ...(pgServer
    ? [
        [
          'PostgreSQL',
          async () => {
            const d = await createTestDatabase(pgServer, 'probnes_crash');
            databases.push(d);
            // What the server wrote is in this database, not in a SQLite file.
            const studiesStored = async () => {
              const c = new pg.Client({ connectionString: d.url });
              await c.connect();
              try {
                return (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM studies')).rows[0]!.n;
              } finally {
                await c.end();
              }
            };
            return { env: { DATABASE_URL: d.url }, studiesStored };
          },
        ] as [string, () => Promise<{ env: Record<string, string>; studiesStored?: () => Promise<number> }>],
      ]
    : []),
];

describe.each(BACKENDS)('crash safety (%s)', (_name, database) => {
  it(`SIGKILL ${KILLS} times under ${CLIENTS} concurrent clients: every acknowledged write survives exactly once, every study still suggests`, async () => {
    const db = path.join(tmp, `crash-${_name}.db`);
    const backend = await database();
    const env = { ENGINE_WORKERS: '1', RATE_LIMIT_PER_MINUTE: '0', ...backend.env };
    const start = async () => {
      const s = await startServer(db, { env });
      servers.push(s);
      return s;
    };
    let server = await start();
    const rnd = lcg(SEED);
    const ledger = new Ledger();
    const context = () => `seed ${SEED}`;

    const ids: string[] = [];
    const methodOf = new Map<string, MethodName>();
    for (const [method, batch] of STUDIES) {
      const res = await fetch(`${server.base}/v1/studies`, { method: 'POST', headers: json, body: JSON.stringify(braninStudy(method, { batch_size: batch, options: fastOptions(method) })) });
      expect(res.status, context()).toBe(201);
      const id = ((await res.json()) as { id: string }).id;
      ids.push(id);
      methodOf.set(id, method);
    }

    let stopping = false;
    /** One request, retried across kills while `retry`; a 4xx or 5xx is recorded as unexpected. Null: outcome unknown. */
    async function send(method: string, url: string, body: unknown, retry: boolean): Promise<any> {
      const giveUp = Date.now() + 60_000;
      for (;;) {
        ledger.requests++;
        try {
          const res = await fetch(server.base + url, { method, signal: AbortSignal.timeout(15_000), ...(body === undefined ? {} : { headers: json, body: JSON.stringify(body) }) });
          const out = await res.json();
          if (res.ok) return out;
          ledger.unexpected.push(`${method} ${url} ${JSON.stringify(body)} → ${res.status} ${JSON.stringify(out)}`);
          return null;
        } catch {
          // Cut by the kill, or the server is restarting (on another port): the outcome is unknown.
          ledger.networkErrors++;
          if (!retry) return null;
          if (Date.now() > giveUp) {
            ledger.unexpected.push(`${method} ${url}: no answer for 60 s`);
            return null;
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      }
    }

    async function client(c: number): Promise<void> {
      const r = lcg(SEED + 1 + c);
      for (let iter = 0; !stopping; iter++) {
        const study = ids[(c + iter) % ids.length]!;
        const at = `/v1/studies/${study}`;
        const count = 1 + Math.floor(r() * 3);
        const s = await send('GET', `${at}/suggestions?count=${count}&client_id=c${c}`, undefined, true);
        if (!s) return;
        for (const t of s.trials as Trial[]) ledger.handedOut.set(key(study, t.trial_id), t.parameters);
        const results: Observation[] = [];
        for (const t of s.trials as Trial[]) {
          const roll = r();
          if (roll < 0.15) {
            if (!(await send('POST', `${at}/trials/${t.trial_id}/heartbeat`, { client_id: `c${c}` }, true))) return;
          }
          if (roll > 0.9) {
            if (!(await send('POST', `${at}/trials/${t.trial_id}/fail`, { reason: 'simulated crash of the evaluation', client_id: `c${c}` }, true))) return;
            ledger.failed.add(key(study, t.trial_id));
          } else {
            results.push({ trial_id: t.trial_id, value: branin(t.parameters) });
          }
        }
        // Half the time one batch, else one request per result; sometimes a point evaluated
        // elsewhere rides along in the first (never resent: it is not idempotent).
        const batches: Observation[][] = r() < 0.5 ? [results] : results.map((o) => [o]);
        if (r() < 0.25) {
          const parameters = { x1: -5 + 15 * r(), x2: 15 * r() };
          batches[0] = [...(batches[0] ?? []), { parameters, value: branin(parameters) }];
        }
        for (const batch of batches) {
          if (batch.length === 0) continue; // every point of this round failed
          const ext = batch.find((o) => 'parameters' in o);
          let out = await send('POST', `${at}/observations`, { observations: batch }, !ext);
          let sent = batch;
          if (!out && ext) {
            // Unknown whether the point is stored; the results by trial id are sent again.
            if (!ledger.externalUnknown.has(study)) ledger.externalUnknown.set(study, new Set());
            ledger.externalUnknown.get(study)!.add(ext.value);
            sent = batch.filter((o) => o !== ext);
            out = sent.length === 0 ? { trials: [] } : await send('POST', `${at}/observations`, { observations: sent }, true);
          }
          if (!out) return;
          (out.trials as Trial[]).forEach((t, i) => {
            const o = sent[i]!;
            if ('trial_id' in o) ledger.observed.set(key(study, o.trial_id), o.value);
            else ledger.externalAcked.set(key(study, t.trial_id), o);
          });
        }
      }
    }

    const clients = Array.from({ length: CLIENTS }, (_, c) => client(c));
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 1000 + 2500 * rnd()));
      await server.stop('SIGKILL');
      server = await start();
    }
    // A little more load after the last restart, then let the clients finish what they hold.
    await new Promise((r) => setTimeout(r, 1000));
    stopping = true;
    await Promise.all(clients);

    console.info(`crash test (${context()}): ${KILLS} kills, ${ledger.requests} requests, ${ledger.networkErrors} cut or refused, ${ledger.observed.size} results and ${ledger.externalAcked.size} external points acknowledged, ${ledger.failed.size} failures`);
    expect(ledger.unexpected, context()).toEqual([]);
    // The kills interrupted work and the clients got through plenty (else this proves little).
    expect(ledger.networkErrors, context()).toBeGreaterThan(0);
    expect(ledger.observed.size, context()).toBeGreaterThan(100);

    for (const study of ids) {
      const trials: Trial[] = [];
      for (let token: string | null = null, first = true; first || token; first = false) {
        const page = (await (await fetch(`${server.base}/v1/studies/${study}/trials?page_size=1000${token ? `&page_token=${token}` : ''}`)).json()) as { trials: Trial[]; next_page_token: string | null };
        trials.push(...page.trials);
        token = page.next_page_token;
      }
      const where = `${context()}, study ${study}`;
      expect(trials.map((t) => t.trial_id), where).toEqual(trials.map((_, i) => i + 1));
      const byId = new Map(trials.map((t) => [t.trial_id, t]));
      for (const t of trials) {
        if (t.state === 'COMPLETED') expect(Number.isFinite(t.value), `${where}, trial ${t.trial_id}`).toBe(true);
        else expect(t.value, `${where}, trial ${t.trial_id}`).toBeNull();
        if (t.source === 'external') {
          const acked = ledger.externalAcked.get(key(study, t.trial_id));
          const possible = acked?.value === t.value || ledger.externalUnknown.get(study)?.has(t.value!) === true;
          expect(possible, `${where}: external trial ${t.trial_id} (value ${t.value}) was never sent`).toBe(true);
        }
      }
      for (const [k, value] of ledger.observed) {
        if (!k.startsWith(`${study}/`)) continue;
        const t = byId.get(Number(k.slice(study.length + 1)));
        expect({ k, state: t?.state, value: t?.value }, where).toEqual({ k, state: 'COMPLETED', value });
      }
      for (const [k, e] of ledger.externalAcked) {
        if (!k.startsWith(`${study}/`)) continue;
        const t = byId.get(Number(k.slice(study.length + 1)));
        expect({ k, source: t?.source, value: t?.value }, where).toEqual({ k, source: 'external', value: e.value });
        for (const [name, v] of Object.entries(e.parameters)) expect(t!.parameters[name], where).toBeCloseTo(v, 12);
      }
      for (const [k, parameters] of ledger.handedOut) {
        if (!k.startsWith(`${study}/`)) continue;
        expect(byId.get(Number(k.slice(study.length + 1)))?.parameters, `${where}, ${k}`).toEqual(parameters);
      }
      for (const k of ledger.failed) if (k.startsWith(`${study}/`)) expect(byId.get(Number(k.slice(study.length + 1)))?.state, `${where}, ${k}`).toBe('FAILED');

      const info = (await (await fetch(`${server.base}/v1/studies/${study}`)).json()) as { trial_counts: Record<string, number> };
      expect(Object.values(info.trial_counts).reduce((a, b) => a + b, 0), where).toBe(trials.length);
      const s = await fetch(`${server.base}/v1/studies/${study}/suggestions?count=1&client_id=after-the-crashes`);
      expect(s.status, where).toBe(200);
      const answer = (await s.json()) as { trials: Trial[]; reason: string | null };
      expect(answer.trials, `${where} (${methodOf.get(study)}, reason ${answer.reason}, ${trials.length} trials)`).toHaveLength(1);
    }
    expect(await server.stop('SIGTERM'), context()).toBe(0);
    if (backend.studiesStored) expect(await backend.studiesStored()).toBe(STUDIES.length);
  }, scaledMs(180_000));
});
