/**
 * Zod building blocks of the request and document schemas (studies/study-request.ts,
 * loop/observation-request.ts, transfer/document-schema.ts). The schemas live in the domain so that
 * the types the services accept are `z.output` of the very schemas a transport validates with.
 */
import { z } from 'zod';

export const Timestamp = z.iso.datetime().describe('ISO-8601 UTC timestamp.');

/** Deepest nesting accepted in free-form JSON (metadata, engine states); ours never exceed a few levels. */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether a parsed JSON value nests deeper than `max` arrays/objects. Iterative, because the checks
 * that follow (JSON.stringify for the size, storage) recurse and a 100 000-level body overflows the stack.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth >= max) return true;
    for (const x of Object.values(v)) if (x !== null && typeof x === 'object') stack.push([x, depth + 1]);
  }
  return false;
}

/**
 * A free-form JSON object no deeper than MAX_JSON_DEPTH and at most `maxBytes` as JSON text (the
 * size is measured only once the depth is known to be safe).
 */
export function boundedJsonObject(maxBytes: number, sizeMessage: string) {
  return z.record(z.string(), z.unknown()).superRefine((m, ctx) => {
    if (nestsDeeperThan(m, MAX_JSON_DEPTH)) ctx.addIssue({ code: 'custom', message: `must nest at most ${MAX_JSON_DEPTH} levels deep` });
    else if (Buffer.byteLength(JSON.stringify(m)) > maxBytes) ctx.addIssue({ code: 'custom', message: sizeMessage });
  });
}

/** A UTF-16 surrogate not paired with its partner: a u-mode class matches only those. */
const LONE_SURROGATE = /[\ud800-\udfff]/u;

/**
 * Text the database keeps: JSON can carry lone surrogates ("\ud800"), which have no UTF-8 form,
 * so SQLite would store U+FFFD instead and the study would silently differ from what was sent.
 */
export function wellFormed<T extends z.ZodString>(s: T) {
  return s.refine((v) => !LONE_SURROGATE.test(v), 'must be well-formed Unicode (a lone surrogate such as \\ud800 cannot be stored)');
}

/**
 * Most field errors one answer lists. Validation stops collecting there (a document with 10⁶ bad
 * elements would otherwise cost a validator pass over all of them and an answer of megabytes).
 */
export const MAX_ERRORS = 20;

/** Whether `v` is a plain object with more than `max` own keys (counting stops at max + 1). */
export function hasMoreKeys(v: unknown, max: number): boolean {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  let n = 0;
  for (const k in v) if (Object.hasOwn(v, k) && ++n > max) return true;
  return false;
}

export const keysMessage = (max: number): string => `must have at most ${max} keys`;

/**
 * A JSON object keyed freely (parameter values by name, method options) with at most `maxKeys`
 * keys, counted before any value is checked: a record's values are otherwise each validated, and a
 * body of 10⁵ wrong values would cost 10⁵ issues before a size check could say no. For request
 * bodies only: the count runs in a preprocess step, which a response schema cannot encode through
 * (responses and the study document use cappedRecord).
 */
export function boundedRecord<K extends z.core.$ZodRecordKey, V extends z.core.SomeType>(key: K, value: V, maxKeys: number) {
  return z.preprocess(
    (v, ctx) => {
      if (hasMoreKeys(v, maxKeys)) ctx.addIssue({ code: 'too_big', origin: 'object', maximum: maxKeys, inclusive: true, input: v, message: keysMessage(maxKeys) });
      return v;
    },
    z.record(key, value).meta({ maxProperties: maxKeys }),
  );
}

/**
 * The same limit for a schema that also describes responses (the study document): checked after
 * the values, so a validator that meets such input must count the keys first itself (hasMoreKeys;
 * see transfer/document-parse.ts).
 */
export function cappedRecord<K extends z.core.$ZodRecordKey, V extends z.core.SomeType>(key: K, value: V, maxKeys: number) {
  return z.record(key, value).refine((o) => !hasMoreKeys(o, maxKeys), keysMessage(maxKeys)).meta({ maxProperties: maxKeys });
}
