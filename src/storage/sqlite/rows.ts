/** Rows as better-sqlite3 returns them (JSON columns as text, booleans as 0 or 1) to storage records (../rows.ts). */
import { engineStateFromRow, type Columns, type EngineStateRow as Engine } from '../rows.js';
import { studyFromRow } from '../study-columns.js';
import { trialFromRow } from '../trial-columns.js';
import type { JsonValue, TrialState } from '../storage.js';

export { keyFromRow as toKey, type KeyRow } from '../rows.js';

const columns: Columns<string, number> = { json: (v) => JSON.parse(v) as JsonValue, bool: (v) => v === 1 };

/** A studies row as the driver returns it (columns: study-columns.ts). */
export type StudyRow = { seq: number; id: string } & Record<string, unknown>;
/** A trials row as the driver returns it (columns: trial-columns.ts). */
export type TrialRow = { trial_id: number } & Record<string, unknown>;
export type EngineStateRow = Engine<string>;

export const toStudy = (r: StudyRow, counts: Partial<Record<TrialState, number>>) => studyFromRow(r, counts, columns);
export const toTrial = (r: TrialRow) => trialFromRow(r, columns);
export const toEngineState = (r: EngineStateRow) => engineStateFromRow(r, columns);
