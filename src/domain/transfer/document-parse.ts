/**
 * Structural validation of an import document with its work bounded before it is done. A document's
 * arrays (trials, engine states, intermediate values) may hold 10⁵ elements; validating them with the
 * whole schema at once reads every element and collects every issue, so a 3 MB body of 10⁶ empty
 * objects costs millions of issues (and the heap). Here instead:
 *  1. each array's length is compared with its declared limit before any element is read;
 *  2. the rest of the document (format, study) is checked with those arrays left unread;
 *  3. the elements are checked one at a time, and checking stops once MAX_ERRORS issues are known.
 * Inside an element every array and record has a small declared limit of its own, checked before
 * its contents (zod checks an array's length first; a record's keys are counted here, since the
 * schema, which also serialises exports, can only count them afterwards), so one element costs at
 * most a few hundred issues.
 * The issues are zod's, with paths from the document's root: the transport reports them as it
 * reports any other schema's.
 */
import { z } from 'zod';
import { hasMoreKeys, MAX_ERRORS } from '../common/schemas.js';
import { LIMITS } from '../studies/study-request.js';
import { DOCUMENT_LIMITS, DocumentSchema, EngineStateEntry, IntermediateEntry, TrialEntry, type StudyDocument } from './document-schema.js';

export type DocumentIssue = z.core.$ZodIssue;
export type DocumentParse = { success: true; data: StudyDocument } | { success: false; issues: DocumentIssue[] };

/** What the validator looked at, for tests and benchmarks that check its work stays bounded. */
export interface ParseMeter {
  /** Array elements validated one by one (step 3). */
  elements: number;
}

/** The document's long arrays: each with its declared limit, the schema of one element and the records in an element. */
const ARRAYS = [
  { key: 'trials', max: DOCUMENT_LIMITS.trials, element: TrialEntry, records: [{ key: 'parameters', max: LIMITS.parameters }] },
  { key: 'engine_states', max: DOCUMENT_LIMITS.engineStates, element: EngineStateEntry, records: [] },
  { key: 'intermediate_values', max: DOCUMENT_LIMITS.intermediateValues, element: IntermediateEntry, records: [] },
] as const;

/** The document without its long arrays' contents: they must be arrays, nothing more is read. */
const Shell = DocumentSchema.extend({
  trials: z.array(z.unknown()),
  engine_states: z.array(z.unknown()),
  intermediate_values: z.array(z.unknown()).default([]),
});

function tooLong(key: string, length: number, max: number): DocumentIssue {
  return { code: 'too_big', origin: 'array', maximum: max, inclusive: true, path: [key], message: `must have at most ${max} items (has ${length}); see the document limits` } as DocumentIssue;
}

function tooManyKeys(path: (string | number)[], max: number): DocumentIssue {
  return { code: 'too_big', origin: 'object', maximum: max, inclusive: true, path, message: `must have at most ${max} keys` } as DocumentIssue;
}

const field = (v: unknown, key: string): unknown => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined);

export function parseDocument(input: unknown, meter?: ParseMeter): DocumentParse {
  // 1. Declared lengths first: an over-long array is refused without reading one element.
  if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
    const doc = input as Record<string, unknown>;
    const over = ARRAYS.flatMap(({ key, max }) => {
      const v = doc[key];
      return Array.isArray(v) && v.length > max ? [tooLong(key, v.length, max)] : [];
    });
    if (hasMoreKeys(field(doc.study, 'options'), LIMITS.options)) over.push(tooManyKeys(['study', 'options'], LIMITS.options));
    if (over.length > 0) return { success: false, issues: over };
  }
  // 2. Everything but the arrays' elements.
  const shell = Shell.safeParse(input);
  if (!shell.success) return { success: false, issues: shell.error.issues.slice(0, MAX_ERRORS) };
  // 3. The elements, until MAX_ERRORS issues are known.
  const issues: DocumentIssue[] = [];
  const parsed: Record<string, unknown[]> = {};
  for (const { key, element, records } of ARRAYS) {
    const items = shell.data[key];
    // Stryker disable next-line ArrayDeclaration: sized ahead only to save growing it; out[i] = … fills an empty array the same
    const out: unknown[] = new Array(items.length);
    for (let i = 0; i < items.length && issues.length < MAX_ERRORS; i++) {
      if (meter) meter.elements++;
      const crowded = records.find((r) => hasMoreKeys(field(items[i], r.key), r.max));
      if (crowded) {
        issues.push(tooManyKeys([key, i, crowded.key], crowded.max));
        continue;
      }
      const r = element.safeParse(items[i]);
      if (r.success) out[i] = r.data;
      else for (const issue of r.error.issues.slice(0, MAX_ERRORS - issues.length)) issues.push({ ...issue, path: [key, i, ...issue.path] });
    }
    parsed[key] = out;
  }
  if (issues.length > 0) return { success: false, issues };
  return { success: true, data: { ...shell.data, ...parsed } as StudyDocument };
}
