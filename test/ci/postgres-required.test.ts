/** Without a PostgreSQL server the PostgreSQL tests skip locally, but fail with CI=true (test/helpers/postgres.ts). */
import { describe, expect, it, vi } from 'vitest';
import { postgresOrSkip } from '../helpers/postgres.js';

describe('postgresOrSkip', () => {
  it('gives the server found', () => {
    expect(postgresOrSkip('postgres://x@127.0.0.1/postgres', '', true)).toBe('postgres://x@127.0.0.1/postgres');
  });

  it('skips with a warning that says why, outside CI', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    expect(postgresOrSkip(null, 'the embedded server did not start (libicuuc.so.60)', false)).toBeNull();
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('libicuuc.so.60'));
    warn.mockRestore();
  });

  it('fails with CI=true, saying why', () => {
    expect(() => postgresOrSkip(null, 'the embedded server did not start (libicuuc.so.60)', true)).toThrow(/never skip.*libicuuc\.so\.60/);
  });
});
