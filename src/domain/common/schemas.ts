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
