/** Studies on PostgreSQL (StudiesStore): create (with the generation-0 engine state), read, list, change, delete. */
import {
  type InitialEngineState,
  type NewStudyRecord,
  type Page,
  type PageRequest,
  type StudyPatch,
  type StudyRecord,
} from '../storage.js';
import type { PgDb } from './db.js';
import { COUNTS_SQL, json, toStudy, type StudyRow } from './rows.js';

/**
 * The insert of a study, and its parameters. `outcomes` (migration 010) is written only when the
 * study has them: without, the statement is the one every release since 006 made (the migration
 * tests create studies with it on the schemas of those releases).
 */
export function insertStudy(s: NewStudyRecord): string {
  const withOutcomes = s.outcomes ? ', outcomes' : '';
  return `INSERT INTO studies (id, tenant_id, name, direction, parameters, prior, method, batch_size, options, seed,
    max_trials, lease_seconds, known_optimum, metadata, state, reason, generation, created_at, updated_at, loop_settings${withOutcomes})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20${s.outcomes ? ', $21' : ''})
  RETURNING *, NULL::json AS counts`;
}

export function studyParams(s: NewStudyRecord, generation: number, updatedAt: string): unknown[] {
  return [
    s.id, s.tenantId, s.name, s.direction, json(s.parameters), json(s.prior), s.method, s.batchSize, json(s.options), s.seed, s.maxTrials, s.leaseSeconds,
    s.knownOptimum, json(s.metadata), s.state, s.reason, generation, s.createdAt, updatedAt, json(s.loopSettings ?? {}), ...(s.outcomes ? [json(s.outcomes)] : []),
  ];
}

export const UPSERT_STATE = `INSERT INTO engine_states (study_id, generation, revision, version, state, created_at) VALUES ($1, $2, $3, $4, $5, $6)
  ON CONFLICT (study_id, generation) DO UPDATE SET revision = excluded.revision, version = excluded.version, state = excluded.state, created_at = excluded.created_at`;

export class StudiesRepo {
  constructor(private readonly db: PgDb) {}

  createStudy(study: NewStudyRecord, initial?: InitialEngineState): Promise<StudyRecord> {
    // One transaction: a study is never visible without its generation-0 engine state.
    return this.db.tx('BEGIN', async (c) => {
      const row = (await c.query<StudyRow>(insertStudy(study), studyParams(study, 0, study.createdAt))).rows[0]!;
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
    const values: unknown[] = [tenantId, studyId, patch.updatedAt];
    // A change of the study is a commit too: a loop request that loaded (or cached, LoopService's
    // warmSnapshots) the study before it must not commit on top of it (a PATCH to PAUSED, say).
    const sets = ['updated_at = $3', 'commit_seq = commit_seq + 1'];
    // Column names come from this fixed list, never from input.
    const fields: [keyof StudyPatch, string, (v: never) => unknown][] = [
      ['name', 'name', (v) => v],
      ['metadata', 'metadata', (v) => json(v)],
      ['state', 'state', (v) => v],
      ['reason', 'reason', (v) => v],
    ];
    for (const [key, column, encode] of fields) {
      if (patch[key] === undefined) continue;
      values.push(encode(patch[key] as never));
      sets.push(`${column} = $${values.length}`);
    }
    const [row] = await this.db.rows<StudyRow>(`UPDATE studies s SET ${sets.join(', ')} WHERE s.tenant_id = $1 AND s.id = $2 RETURNING s.*, ${COUNTS_SQL}`, values);
    return row ? toStudy(row) : null;
  }

  async deleteStudy(tenantId: string, studyId: string): Promise<boolean> {
    return this.db.call(async () => ((await this.db.pool.query('DELETE FROM studies WHERE tenant_id = $1 AND id = $2', [tenantId, studyId])).rowCount ?? 0) > 0);
  }
}
