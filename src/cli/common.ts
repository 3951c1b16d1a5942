/**
 * What every `probnes` command shares: where output goes (injectable, so tests capture it without a
 * child process), the usage error that maps to exit code 2, and strict option parsing with
 * node:util parseArgs (an unknown option or a missing value is a usage error, never ignored).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  /** Whether stderr is a terminal (progress bars redraw one line only then). Default: false. */
  errIsTTY?: boolean;
  /** Working directory for relative paths (default: process.cwd()). */
  cwd?: string;
  /** Child processes may write straight to this process's stdout/stderr (true for the real terminal). */
  inheritStdio?: boolean;
}

export const processIo: CliIo = {
  out: (s) => process.stdout.write(s),
  err: (s) => process.stderr.write(s),
  env: process.env,
  errIsTTY: process.stderr.isTTY === true,
  inheritStdio: true,
};

/** Bad command-line usage: the message goes to stderr with the command's usage, exit code 2. */
export class UsageError extends Error {}

export type Values = Record<string, string | boolean | undefined>;

/**
 * Strict parse. `--help`/`-h` is added to every command; the caller checks `values.help` first,
 * so `probnes x --help` answers even when other arguments are missing.
 */
export function parse(args: string[], options: NonNullable<ParseArgsConfig['options']>, positionals: number | { min: number; max: number }) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const values = parsed.values as Values;
  const { min, max } = typeof positionals === 'number' ? { min: positionals, max: positionals } : positionals;
  const n = parsed.positionals.length;
  if (!values.help && (n < min || n > max)) {
    const want = min === max ? `${min}` : `${min} to ${max}`;
    throw new UsageError(n > max && max === 0 ? `unexpected argument ${JSON.stringify(parsed.positionals[0])}` : `expected ${want} argument${max === 1 ? '' : 's'}, got ${n}`);
  }
  return { values, positionals: parsed.positionals };
}

/** An integer option in [min, max], or its default; anything else is a usage error naming the option. */
export function intOption(values: Values, name: string, min: number, max: number, dflt: number): number {
  const raw = values[name];
  if (raw === undefined) return dflt;
  const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be an integer from ${min} to ${max} (got ${JSON.stringify(raw)})`);
  return n;
}
