/** All SQL for studies. Synchronous (better-sqlite3); SqliteStorage wraps it in Promises. */
import type { SqliteDatabase } from './connection.js';
import type { NewStudyRecord, Page, PageRequest, StudyPatch, StudyRecord, TrialCounts } from '../storage.js';
import { toStudy, type StudyRow } from './rows.js';

export class StudiesRepo {
  private readonly insertStmt;
  private insertOutcomesStmt: ReturnType<SqliteDatabase['prepare']> | undefined;
  private readonly insertWithOutcomes: () => ReturnType<SqliteDatabase['prepare']>;
  private readonly byIdStmt;
  private readonly countsStmt;
  private readonly pageStmt;
  private readonly deleteStmt;

  constructor(private readonly db: SqliteDatabase) {
    // `outcomes` (migration 010) is written only when the study has them: without, the insert is the
    // one every release since 007 made (the migration tests create studies with it on those schemas).
    const insert = (outcomes: boolean) => `
      INSERT INTO studies (id, tenant_id, name, direction, parameters, prior, method, batch_size, options, seed,
        max_trials, lease_seconds, known_optimum, metadata, state, reason, created_at, updated_at, loop_settings${outcomes ? ', outcomes' : ''})
      VALUES (@id, @tenant_id, @name, @direction, @parameters, @prior, @method, @batch_size, @options, @seed,
        @max_trials, @lease_seconds, @known_optimum, @metadata, @state, @reason, @created_at, @created_at, @loop_settings${outcomes ? ', @outcomes' : ''})`;
    this.insertStmt = db.prepare(insert(false));
    this.insertWithOutcomes = () => (this.insertOutcomesStmt ??= db.prepare(insert(true)));
    this.byIdStmt = db.prepare<[string, string], StudyRow>('SELECT * FROM studies WHERE tenant_id = ? AND id = ?');
    // Kept by triggers (migration 003): a few rows, however many trials the study has.
    this.countsStmt = db.prepare<[string], { state: keyof TrialCounts; n: number }>('SELECT state, n FROM study_trial_counts WHERE study_id = ?');
    this.pageStmt = db.prepare<[string, number, number], StudyRow>(
      'SELECT * FROM studies WHERE tenant_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    );
    this.deleteStmt = db.prepare<[string, string]>('DELETE FROM studies WHERE tenant_id = ? AND id = ?');
  }

  insert(s: NewStudyRecord): StudyRecord {
    (s.outcomes ? this.insertWithOutcomes() : this.insertStmt).run({
      id: s.id,
      tenant_id: s.tenantId,
      name: s.name,
      direction: s.direction,
      parameters: JSON.stringify(s.parameters),
      prior: JSON.stringify(s.prior),
      method: s.method,
      batch_size: s.batchSize,
      options: JSON.stringify(s.options),
      seed: s.seed,
      max_trials: s.maxTrials,
      lease_seconds: s.leaseSeconds,
      known_optimum: s.knownOptimum,
      metadata: JSON.stringify(s.metadata),
      state: s.state,
      reason: s.reason,
      created_at: s.createdAt,
      loop_settings: JSON.stringify(s.loopSettings ?? {}),
      ...(s.outcomes ? { outcomes: JSON.stringify(s.outcomes) } : {}),
    });
    return this.get(s.tenantId, s.id)!;
  }

  get(tenantId: string, id: string): StudyRecord | null {
    const row = this.byIdStmt.get(tenantId, id);
    return row ? this.toRecord(row) : null;
  }

  page(tenantId: string, req: PageRequest): Page<StudyRecord> {
    const after = req.after === null ? 0 : Number(req.after);
    // One extra row tells whether another page exists without a COUNT.
    const rows = this.pageStmt.all(tenantId, Number.isSafeInteger(after) ? after : 0, req.limit + 1);
    const more = rows.length > req.limit;
    const pageRows = more ? rows.slice(0, req.limit) : rows;
    return { items: pageRows.map((r) => this.toRecord(r)), next: more ? String(pageRows[pageRows.length - 1]!.seq) : null };
  }

  update(tenantId: string, id: string, patch: StudyPatch): StudyRecord | null {
    const params: Record<string, unknown> = { tenant_id: tenantId, id, updated_at: patch.updatedAt };
    if (patch.name !== undefined) params.name = patch.name;
    if (patch.metadata !== undefined) params.metadata = JSON.stringify(patch.metadata);
    if (patch.state !== undefined) params.state = patch.state;
    if (patch.reason !== undefined) params.reason = patch.reason;
    // Column names come from this fixed list, never from input.
    const sets = ['updated_at', 'name', 'metadata', 'state', 'reason'].filter((c) => c in params).map((c) => `${c} = @${c}`);
    // A change of the study is a commit too: a loop request that read the study before it (and
    // computes outside any lock) must find its commit stale, not suggest points of a paused study.
    sets.push('commit_seq = commit_seq + 1');
    const res = this.db.prepare(`UPDATE studies SET ${sets.join(', ')} WHERE tenant_id = @tenant_id AND id = @id`).run(params);
    return res.changes === 0 ? null : this.get(tenantId, id);
  }

  delete(tenantId: string, id: string): boolean {
    return this.deleteStmt.run(tenantId, id).changes > 0;
  }

  private toRecord(row: StudyRow): StudyRecord {
    return toStudy(row, Object.fromEntries(this.countsStmt.all(row.id).map((c) => [c.state, c.n])));
  }
}
