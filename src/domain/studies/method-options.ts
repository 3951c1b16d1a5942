/**
 * Per-method option schemas, built from each strategy's descriptor (the single description of what
 * each method accepts): every option optional, types and ranges enforced, unknown keys rejected.
 * The create request and the study document check their `options` against them (`addOptionIssues`).
 */
import { z, type RefinementCtx } from 'zod';
import { METHOD_NAMES, STRATEGIES, type MethodName, type OptionSpec } from '../../engine/index.js';

function optionSchema(spec: OptionSpec): z.ZodType {
  switch (spec.kind) {
    case 'number': {
      let s = spec.integer ? z.int() : z.number();
      s = spec.exclusiveMin ? s.gt(spec.min) : s.min(spec.min);
      return s.max(spec.max).describe(spec.description);
    }
    case 'enum':
      return z.enum(spec.values as [string, ...string[]]).describe(spec.description);
    case 'boolean':
      return z.boolean().describe(spec.description);
  }
}

const cache = new Map<string, z.ZodType>();

/**
 * Which options `options` may hold: a request's are the API's options of the method; a stored study's
 * (an exported document) may also hold those earlier releases accepted, public then: the ablation
 * switches now reserved to benchmark code (checked by their specs) and the retired options (any value).
 */
export type OptionsSource = 'request' | 'stored';

/** The strict options object for one method. */
export function optionsSchemaFor(method: MethodName, source: OptionsSource = 'request'): z.ZodType {
  const key = `${source}:${method}`;
  let s = cache.get(key);
  if (!s) {
    const d = STRATEGIES[method];
    const specs = source === 'stored' ? { ...d.benchOptions, ...d.options } : d.options;
    const shape: Record<string, z.ZodType> = Object.fromEntries(Object.entries(specs).map(([k, spec]) => [k, optionSchema(spec).optional()]));
    // Stryker disable next-line ArrayDeclaration: a method without retired options would then accept one stored option, named by the mutant itself ("Stryker was here")
    if (source === 'stored') for (const k of d.retiredOptions ?? []) shape[k] = z.unknown().optional();
    s = z.strictObject(shape);
    cache.set(key, s);
  }
  return s;
}

/**
 * The problems of `options` for `method` as issues of the enclosing object, each at
 * `options/<key>`: an unknown key is named as not an option of the method.
 */
export function addOptionIssues(method: MethodName, options: Record<string, unknown>, ctx: RefinementCtx, source: OptionsSource = 'request'): void {
  const res = optionsSchemaFor(method, source).safeParse(options);
  if (res.success) return;
  for (const issue of res.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) ctx.addIssue({ code: 'custom', path: ['options', key], message: `not an option of method ${method}` });
    } else {
      ctx.addIssue({ code: 'custom', path: ['options', ...issue.path.map((p) => String(p))], message: issue.message });
    }
  }
}

function describeSpec(spec: OptionSpec): string {
  switch (spec.kind) {
    case 'number': {
      const lo = spec.exclusiveMin ? `(${spec.min}` : `[${spec.min}`;
      return `${spec.integer ? 'integer' : 'number'} in ${lo}, ${spec.max}]`;
    }
    case 'enum':
      return spec.values.map((v) => `"${v}"`).join(' | ');
    case 'boolean':
      return 'boolean';
  }
}

/** Markdown list of every method's options, for the OpenAPI description of `options`. */
export function optionsDocumentation(): string {
  return METHOD_NAMES.map((m) => {
    const entries = Object.entries(STRATEGIES[m].options);
    if (entries.length === 0) return `- \`${m}\`: no options`;
    return `- \`${m}\`: ${entries.map(([k, spec]) => `\`${k}\` (${describeSpec(spec)})`).join(', ')}`;
  }).join('\n');
}
