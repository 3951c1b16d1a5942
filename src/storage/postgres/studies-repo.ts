/** Studies on PostgreSQL (StudiesStore): create (with the generation-0 engine state), read, list, change, delete. */
import {
  type ImportedStudy,
  type InitialEngineState,
  type NewStudyRecord,
  type Page,
  type PageRequest,
  type StudyPatch,
  type StudyRecord,
} from '../storage.js';
import type { PgDb } from './db.js';
import { COUNTS_SQL, json, toStudy, type StudyRow } from './rows.js';
import { createdStudy, pgInsertStudy, pgStudyUpdate } from '../study-columns.js';

/**
 * The insert of a study (a new one: createdStudy; or an imported one), its columns and parameters
 * from study-columns.ts, returning the row as every study read does.
 */
export function insertStudy(s: ImportedStudy): { text: string; values: unknown[] } {
  const { text, values } = pgInsertStudy(s);
  return { text: `${text} RETURNING *, NULL::json AS counts`, values };
}

export const UPSERT_STATE = `INSERT INTO engine_states (study_id, generation, revision, version, state, created_at) VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (study_id, generation) DO UPDATE SET revision = excluded.revision, version = excluded.version, state = excluded.state, created_at = excluded.created_at`;

export class StudiesRepo {
  constructor(private readonly db: PgDb) {}

  createStudy(study: NewStudyRecord, initial?: InitialEngineState): Promise<StudyRecord> {
    // One transaction: a study is never visible without its generation-0 engine state.
    return this.db.tx('BEGIN', async (c) => {
      const insert = insertStudy(createdStudy(study));
      const row = (await c.query<StudyRow>(insert.text, insert.values)).rows[0]!;
      if (initial) await c.query(UPSERT_STATE, [study.id, 0, 1, initial.version, json(initial.state), study.createdAt]);
      return toStudy(row);
    });
  }

  async getStudy(tenantId: string, studyId: string): Promise<StudyRecord | null> {
    const [row] = await this.db.rows<StudyRow>(`SELECT s.*, ${COUNTS_SQL} FROM studies s WHERE s.tenant_id = $1 AND s.id = $2`, [tenantId, studyId]);
    return row ? toStudy(row) : null;
  }

  async listStudies(tenantId: string, page: PageRequest): Promise<Page<StudyRecord>> {
    const after = page.after === null ? 0 : Number(page.after);
    // One extra row tells whether another page exists without a COUNT.
    const rows = await this.db.rows<StudyRow>(`SELECT s.*, ${COUNTS_SQL} FROM studies s WHERE s.tenant_id = $1 AND s.seq > $2 ORDER BY s.seq LIMIT $3`, [
      tenantId,
      Number.isSafeInteger(after) ? after : 0,
      page.limit + 1,
    ]);
    const more = rows.length > page.limit;
    const items = more ? rows.slice(0, page.limit) : rows;
    return { items: items.map(toStudy), next: more ? String(items[items.length - 1]!.seq) : null };
  }

  async updateStudy(tenantId: string, studyId: string, patch: StudyPatch): Promise<StudyRecord | null> {
    const values: unknown[] = [tenantId, studyId];
    // A change of the study is a commit too: a loop request that loaded (or cached, LoopService's
    // warmSnapshots) the study before it must not commit on top of it (a PATCH to PAUSED, say).
    // Column names come from study-columns.ts, never from input.
    const sets = [...pgStudyUpdate(patch, values), 'commit_seq = commit_seq + 1'];
    const [row] = await this.db.rows<StudyRow>(`UPDATE studies s SET ${sets.join(', ')} WHERE s.tenant_id = $1 AND s.id = $2 RETURNING s.*, ${COUNTS_SQL}`, values);
    return row ? toStudy(row) : null;
  }

  async deleteStudy(tenantId: string, studyId: string): Promise<boolean> {
    return this.db.call(async () => ((await this.db.pool.query('DELETE FROM studies WHERE tenant_id = $1 AND id = $2', [tenantId, studyId])).rowCount ?? 0) > 0);
  }
}
