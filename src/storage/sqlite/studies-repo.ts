/** All SQL for studies. Synchronous (better-sqlite3); SqliteStorage wraps it in Promises. */
import type { SqliteDatabase } from './connection.js';
import type { ImportedStudy, NewStudyRecord, Page, PageRequest, StudyPatch, StudyRecord, TrialCounts } from '../storage.js';
import { createdStudy, sqliteInsertStudy, sqliteStudyUpdate } from '../study-columns.js';
import { toStudy, type StudyRow } from './rows.js';

export class StudiesRepo {
  /** The insert statements by their SQL: two, with and without the columns written only when set (study-columns.ts). */
  private readonly inserts = new Map<string, ReturnType<SqliteDatabase['prepare']>>();
  private readonly byIdStmt;
  private readonly countsStmt;
  private readonly pageStmt;
  private readonly deleteStmt;

  constructor(private readonly db: SqliteDatabase) {
    this.byIdStmt = db.prepare<[string, string], StudyRow>('SELECT * FROM studies WHERE tenant_id = ? AND id = ?');
    // Kept by triggers (migration 003): a few rows, however many trials the study has.
    this.countsStmt = db.prepare<[string], { state: keyof TrialCounts; n: number }>('SELECT state, n FROM study_trial_counts WHERE study_id = ?');
    this.pageStmt = db.prepare<[string, number, number], StudyRow>(
      'SELECT * FROM studies WHERE tenant_id = ? AND seq > ? ORDER BY seq LIMIT ?',
    );
    this.deleteStmt = db.prepare<[string, string]>('DELETE FROM studies WHERE tenant_id = ? AND id = ?');
  }

  /** A new study: generation 0, updated when created. */
  insert(s: NewStudyRecord): StudyRecord {
    return this.insertImported(createdStudy(s));
  }

  /** A study as imported, its generation and update time included. */
  insertImported(s: ImportedStudy): StudyRecord {
    const { sql, params } = sqliteInsertStudy(s);
    let stmt = this.inserts.get(sql);
    if (!stmt) this.inserts.set(sql, (stmt = this.db.prepare(sql)));
    stmt.run(params);
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
    // Column names come from study-columns.ts, never from input.
    const { sets, params } = sqliteStudyUpdate(patch);
    // A change of the study is a commit too: a loop request that read the study before it (and
    // computes outside any lock) must find its commit stale, not suggest points of a paused study.
    sets.push('commit_seq = commit_seq + 1');
    const res = this.db.prepare(`UPDATE studies SET ${sets.join(', ')} WHERE tenant_id = @tenant_id AND id = @id`).run({ ...params, tenant_id: tenantId, id });
    return res.changes === 0 ? null : this.get(tenantId, id);
  }

  delete(tenantId: string, id: string): boolean {
    return this.deleteStmt.run(tenantId, id).changes > 0;
  }

  private toRecord(row: StudyRow): StudyRecord {
    return toStudy(row, Object.fromEntries(this.countsStmt.all(row.id).map((c) => [c.state, c.n])));
  }
}
