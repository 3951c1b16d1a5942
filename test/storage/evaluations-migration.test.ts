/**
 * Migration 008 (SQLite and PostgreSQL): the evaluation rows that the triggers of SQLite's 006 and
 * PostgreSQL's 005 computed are computed by the domain (src/domain/results) and written by the
 * commit. Two checks on each backend, against the triggers themselves as the reference:
 *
 *   - a database built at version 7 (rows by the triggers) reads exactly the same after migrating
 *     to 8: evaluations, summary, best-so-far steps, the completed trials in completion order;
 *   - the same commits applied to a database kept at version 7 (triggers) and to one at version 8
 *     (the domain's rows, as the loop computes them) leave identical reads, for both directions,
 *     values with ties, completion times with ties, out of order and missing, results completing
 *     REQUESTED trials and arriving as new trials, in several commits.
 *
 * The second is also the mutant check of the rows' rule: flipping a comparison or a direction in
 * results/ (better, placeEvaluations) makes the two databases differ.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, loadPostgresMigrations, PostgresStorage, SqliteStorage, type GenerationCommit, type InitialEngineState, type NewStudyRecord, type NewTrial, type Storage, type TrialUpdate } from '../../src/storage/index.js';
import { commitWithEvaluations } from '../helpers/evaluations.js';
import { openDatabase } from '../../src/storage/sqlite/connection.js';
import { migrate } from '../../src/storage/sqlite/migrate.js';
import { StudiesRepo } from '../../src/storage/sqlite/studies-repo.js';
import { SummariesRepo } from '../../src/storage/sqlite/summaries-repo.js';
import { createTestDatabase, postgresServer, type TestDatabase } from '../helpers/postgres.js';
import { study } from './contract.js';

const OLD = 7;
const STUDIES = [
  ['lo', 'minimize'],
  ['hi', 'maximize'],
] as const;

/** A small deterministic generator. */
function lcg(seed: number) {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const at = (s: number) => new Date(Date.UTC(2025, 0, 1) + s * 1000).toISOString();

/**
 * One study's commits, built from the seed and what the study holds (its REQUESTED trials): new
 * trials (COMPLETED with a time, without one, or without a value; REQUESTED to complete later) and
 * updates that complete or fail earlier REQUESTED trials, at times that often fall before results
 * already stored.
 */
class Script {
  private readonly rnd: () => number;
  private requested: number[] = [];
  private nextId = 1;

  constructor(seed: number) {
    this.rnd = lcg(seed);
  }

  commit(commitNo: number): GenerationCommit {
    const r = this.rnd;
    const value = () => Math.floor(r() * 5) - 2;
    const time = () => at(Math.floor(r() * 12) + commitNo * 3);
    const updates: TrialUpdate[] = [];
    for (const id of this.requested.splice(0, Math.floor(r() * 3))) {
      const fail = r() < 0.2;
      updates.push({
        trialId: id, expectedState: 'REQUESTED', state: fail ? 'FAILED' : 'COMPLETED', clientId: null, leaseExpiresAt: null,
        value: fail ? null : value(), stderr: null, failureReason: fail ? 'x' : null, late: false, completedAt: time(),
      });
    }
    const newTrials: NewTrial[] = Array.from({ length: 1 + Math.floor(r() * 4) }, () => {
      const u = r();
      const base = { generation: 0, parameters: { x: r() }, point: [r()], source: 'external' as const };
      if (u < 0.25) return { ...base, state: 'REQUESTED' as const };
      if (u < 0.3) return { ...base, state: 'COMPLETED' as const, value: value(), completedAt: null };
      if (u < 0.33) return { ...base, state: 'COMPLETED' as const, value: null, completedAt: time() };
      return { ...base, state: 'COMPLETED' as const, value: value(), stderr: r() < 0.3 ? 0.1 : null, completedAt: time() };
    });
    newTrials.forEach((t, i) => {
      if (t.state === 'REQUESTED') this.requested.push(this.nextId + i);
    });
    this.nextId += newTrials.length;
    return { expectedRevision: 1, generation: 0, engineState: null, newTrials, trialUpdates: updates, now: at(1000 + commitNo) };
  }
}

/** The completed trials in completion order: [trial id, value, completed at]. */
const COMPLETED_AT_7 = `SELECT t.trial_id, t.value, t.completed_at FROM study_evaluations e JOIN trials t ON t.study_id = e.study_id AND t.trial_id = e.trial_id
  WHERE e.study_id = $1 ORDER BY e.idx`;

/** Every read of the evaluations, as the routes make them. */
async function reads(o: Opened, studyId: string) {
  const s = o.s;
  const summary = await s.evaluationSummary(studyId);
  return {
    summary,
    evaluations: await s.listEvaluations(studyId, { afterIndex: 0, limit: 10_000 }),
    steps: await s.listBestSteps(studyId, { afterIndex: 0, throughIndex: summary.count, limit: 10_000 }),
    at: await s.evaluationsAt(studyId, [1, 2, summary.count]),
    completed: o.completedAt7 ? await o.completedAt7(studyId) : (await s.listCompletedTrialsAfter(studyId, 0, 0)).map((t) => [t.trialId, t.value, t.completedAt]),
    recent: (await s.listRecentCompleted(studyId, { limit: 5, completedBy: at(20) })).map((t) => t.trialId),
  };
}

async function createStudies(s: Storage) {
  for (const [id, direction] of STUDIES) await s.createStudy(study(id, 'default', { direction }), { version: 1, state: {} });
}

/**
 * A storage open on a database, how a commit without evaluation rows is made at version 7 (the
 * triggers compute them), as that release's SQL made it, and, at version 7, the completed trials'
 * values as that schema holds them (this code reads a trial's outcome from migration 009's column).
 */
interface Opened {
  s: Storage;
  commitAt7: (studyId: string, c: GenerationCommit) => Promise<{ committed: boolean }>;
  completedAt7?: (studyId: string) => Promise<unknown[]>;
}

/** `count` commits of each study's script; triggers: at version 7, domain: the loop's rows. */
async function run(o: Opened, scripts: Map<string, Script>, from: number, count: number, how: 'triggers' | 'domain') {
  if (how === 'domain' && o.completedAt7) throw new Error('the loop\'s commits need the latest schema');
  for (let k = from; k < from + count; k++) {
    for (const [id] of STUDIES) {
      const c = scripts.get(id)!.commit(k);
      const res = how === 'triggers' ? await o.commitAt7(id, c) : await commitWithEvaluations(o.s, id, c);
      expect(res.committed).toBe(true);
    }
  }
}

const scriptsFor = () => new Map(STUDIES.map(([id], i) => [id, new Script(31 + i)]));

/** The two checks, given a way to open a database at version 7 and to open (migrating) at the latest. */
function checks(open: (name: string, version: 'old' | 'new') => Promise<Opened>, schemaCheck: (s: Storage) => Promise<void>) {
  it('a database at version 7 reads exactly as before after migrating', async () => {
    const scripts = scriptsFor();
    let o = await open('fwd', 'old');
    await createStudies(o.s);
    await run(o, scripts, 0, 8, 'triggers');
    const before = await Promise.all(STUDIES.map(([id]) => reads(o, id)));
    expect(before[0]!.summary.count).toBeGreaterThan(15);
    await o.s.close();
    o = await open('fwd', 'new');
    try {
      await schemaCheck(o.s);
      expect(await Promise.all(STUDIES.map(([id]) => reads(o, id)))).toEqual(before);
    } finally {
      await o.s.close();
    }
  });

  it('the domain\'s rows are the triggers\' rows, commit after commit, on a migrated database and on a new one', async () => {
    const [refScripts, migScripts, newScripts] = [scriptsFor(), scriptsFor(), scriptsFor()];
    const ref = await open('ref', 'old');
    let mig = await open('mig', 'old');
    const fresh = await open('fresh', 'new');
    try {
      for (const o of [ref, mig, fresh]) await createStudies(o.s);
      // Common history at version 7 for ref and mig; fresh starts at 8 with the same commits.
      await run(ref, refScripts, 0, 4, 'triggers');
      await run(mig, migScripts, 0, 4, 'triggers');
      await run(fresh, newScripts, 0, 4, 'domain');
      await mig.s.close();
      mig = await open('mig', 'new');
      for (let round = 4; round < 12; round += 2) {
        await run(ref, refScripts, round, 2, 'triggers');
        await run(mig, migScripts, round, 2, 'domain');
        await run(fresh, newScripts, round, 2, 'domain');
        for (const [id] of STUDIES) {
          const expected = await reads(ref, id);
          expect(await reads(mig, id)).toEqual(expected);
          expect(await reads(fresh, id)).toEqual(expected);
        }
      }
      // Enough of the cases above happened for the comparison to mean something.
      const lo = await reads(ref, 'lo');
      expect(lo.summary.count).toBeGreaterThanOrEqual(30);
      expect(lo.steps.length).toBeGreaterThan(1);
    } finally {
      await Promise.all([ref.s.close(), mig.s.close(), fresh.s.close()]);
    }
  });
}

describe('migration 008 (SQLite): evaluations from the domain', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'probnes-eval-008-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const all = loadMigrations();
  checks(
    async (name, version) => {
      const file = path.join(dir, `${name}.db`);
      if (version === 'new') return { s: SqliteStorage.open(file, { writerThread: false }), commitAt7: () => Promise.reject(new Error('not at version 7')) };
      // Version 7 as that release wrote and read it (this code's SqliteStorage needs migration 009's
      // outcome column): the schema's migrations, the study and evaluation reads whose tables did
      // not change, and its commit (trials-repo.ts then) with the value and stderr columns; the
      // triggers write the evaluation rows.
      const db = openDatabase(file);
      migrate(db, all.slice(0, OLD));
      const studies = new StudiesRepo(db);
      const summaries = new SummariesRepo(db);
      const s = {
        createStudy: async (st: NewStudyRecord, initial: InitialEngineState) => {
          const record = studies.insert(st);
          db.prepare('INSERT INTO engine_states (study_id, generation, revision, version, state, created_at) VALUES (?, 0, 1, ?, ?, ?)').run(st.id, initial.version, JSON.stringify(initial.state), st.createdAt);
          return record;
        },
        evaluationSummary: async (id: string) => summaries.summary(id),
        listEvaluations: async (id: string, q: { afterIndex: number; limit: number }) => summaries.page(id, q),
        listBestSteps: async (id: string, q: { afterIndex: number; throughIndex: number; limit: number }) => summaries.steps(id, q),
        evaluationsAt: async (id: string, indices: readonly number[]) => summaries.at(id, indices),
        listRecentCompleted: async (id: string, q: { limit: number; completedBy: string }) =>
          db
            .prepare<[string, string, number], { trialId: number }>(
              `SELECT e.trial_id AS trialId FROM (SELECT trial_id, completed_at FROM study_evaluations WHERE study_id = ? AND completed_at <= ? ORDER BY completed_at DESC, trial_id DESC LIMIT ?) e
                ORDER BY e.completed_at, e.trial_id`,
            )
            .all(id, q.completedBy, q.limit),
        close: async () => db.close(),
      } as unknown as Storage;
      const commitAt7 = async (id: string, c: GenerationCommit) => {
        db.transaction(() => {
          const { next_trial_id: next } = db.prepare<[string], { next_trial_id: number }>('SELECT next_trial_id FROM studies WHERE id = ?').get(id)!;
          for (const u of c.trialUpdates ?? []) {
            const r = db
              .prepare(`UPDATE trials SET state = ?, client_id = ?, lease_expires_at = ?, value = ?, stderr = ?, failure_reason = ?, late = ?, completed_at = ?, updated_at = ?
                WHERE study_id = ? AND trial_id = ? AND state = ?`)
              .run(u.state, u.clientId, u.leaseExpiresAt, u.value, u.stderr, u.failureReason, u.late ? 1 : 0, u.completedAt, c.now, id, u.trialId, u.expectedState);
            if (r.changes !== 1) throw new Error('trial conflict');
          }
          c.newTrials.forEach((t, i) =>
            db
              .prepare(`INSERT INTO trials (study_id, trial_id, state, generation, client_id, lease_expires_at, parameters, point, value, stderr, source, created_at, completed_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
              .run(id, next + i, t.state, t.generation, t.clientId ?? null, t.leaseExpiresAt ?? null, JSON.stringify(t.parameters), JSON.stringify(t.point), t.value ?? null, t.stderr ?? null, t.source, c.now, t.completedAt ?? null, c.now),
          );
          db.prepare('UPDATE studies SET generation = ?, next_trial_id = ?, updated_at = ?, commit_seq = commit_seq + 1 WHERE id = ?').run(c.generation, next + c.newTrials.length, c.now, id);
        }).immediate();
        return { committed: true };
      };
      const completedAt7 = async (id: string) =>
        db
          .prepare<[string], { trial_id: number; value: number | null; completed_at: string | null }>(COMPLETED_AT_7.replace('$1', '?'))
          .all(id)
          .map((r) => [r.trial_id, r.value, r.completed_at]);
      return { s, commitAt7, completedAt7 };
    },
    async () => {
      // No trigger decides anything about evaluations any more.
      const db = new Database(path.join(dir, 'fwd.db'), { readonly: true });
      try {
        expect(db.pragma('user_version', { simple: true })).toBe(all.length);
        expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND sql LIKE '%study_evaluations%'").all()).toEqual([]);
      } finally {
        db.close();
      }
    },
  );
});

const server = postgresServer();

describe.skipIf(!server)('migration 008 (PostgreSQL): evaluations from the domain', () => {
  const dbs = new Map<string, TestDatabase>();
  beforeAll(async () => {
    for (const name of ['fwd', 'ref', 'mig', 'fresh']) dbs.set(name, await createTestDatabase(server!, `probnes_ev8_${name}`));
  });
  afterAll(async () => {
    for (const d of dbs.values()) await d.drop();
  });
  const all = loadPostgresMigrations();
  checks(
    async (name, version) => {
      const url = dbs.get(name)!.url;
      const s = await PostgresStorage.open({ url, poolSize: 2, ...(version === 'old' ? { migrations: all.slice(0, OLD) } : {}) });
      // Version 7's commit function (migration 003's signature), called as that release called it.
      const commitAt7 = async (id: string, c: GenerationCommit) => {
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        try {
          const u = c.trialUpdates ?? [];
          const n = c.newTrials;
          const { rows } = await pool.query<{ outcome: string }>(`SELECT * FROM probnes_commit(${Array.from({ length: 29 }, (_, i) => `$${i + 1}`).join(', ')})`, [
            id, c.expectedRevision, c.expectedCommitSeq ?? null, c.generation, null, null, c.now,
            u.map((x) => x.trialId), u.map((x) => x.expectedState), u.map((x) => x.state), u.map((x) => x.clientId), u.map((x) => x.leaseExpiresAt),
            u.map((x) => x.value), u.map((x) => x.stderr), u.map((x) => x.failureReason), u.map((x) => x.late), u.map((x) => x.completedAt),
            n.map((t) => t.state), n.map((t) => t.generation), n.map((t) => t.clientId ?? null), n.map((t) => t.leaseExpiresAt ?? null),
            n.map((t) => JSON.stringify(t.parameters)), n.map((t) => JSON.stringify(t.point)), n.map((t) => t.value ?? null), n.map((t) => t.stderr ?? null),
            n.map((t) => t.source), n.map((t) => t.completedAt ?? null), null, null,
          ]);
          return { committed: rows[0]?.outcome === 'committed' };
        } finally {
          await pool.end();
        }
      };
      const completedAt7 = async (id: string) => {
        const pool = new pg.Pool({ connectionString: url, max: 1 });
        try {
          return (await pool.query<{ trial_id: number; value: number | null; completed_at: string | null }>(COMPLETED_AT_7, [id])).rows.map((r) => [r.trial_id, r.value, r.completed_at]);
        } finally {
          await pool.end();
        }
      };
      return version === 'old' ? { s, commitAt7, completedAt7 } : { s, commitAt7 };
    },
    async (s) => {
      expect((await s.health()).schemaVersion).toBe(all.length);
    },
  );
});
