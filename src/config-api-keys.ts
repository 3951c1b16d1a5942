/**
 * API keys given in the environment (API_KEYS, or the file named by API_KEYS_FILE), for containers
 * where running the CLI against the database is awkward. Format: `tenant:key` entries separated by
 * commas or newlines; blank lines and lines starting with `#` are ignored (file only).
 *
 * Keys are hashed here, while parsing, so the frozen Config (which may be logged or dumped) only
 * ever holds hashes; error messages name the entry by position and tenant, never by key.
 */
import { z } from 'zod';
import { hashApiKey, MIN_ENV_KEY_LENGTH, TENANT_PATTERN, type EnvApiKey } from './domain/auth/api-keys.js';

/** Visible ASCII except the separators; no whitespace, so a stray space cannot become part of a key. */
const KEY_CHARS = /^[\x21-\x7e]+$/;

export const apiKeysSchema = z.string().transform((text, ctx): EnvApiKey[] => {
  const entries = text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('#'));
  const keys: EnvApiKey[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const where = `entry ${i + 1}`;
    const colon = entry.indexOf(':');
    const tenant = colon < 0 ? '' : entry.slice(0, colon);
    const key = colon < 0 ? '' : entry.slice(colon + 1);
    if (colon < 0) return ctx.addIssue({ code: 'custom', message: `${where} must be tenant:key` });
    if (!TENANT_PATTERN.test(tenant)) {
      return ctx.addIssue({ code: 'custom', message: `${where}: tenant must be 1–64 letters, digits, ".", "_" or "-", starting with a letter or digit` });
    }
    if (key.length < MIN_ENV_KEY_LENGTH || !KEY_CHARS.test(key)) {
      return ctx.addIssue({ code: 'custom', message: `${where} (tenant ${tenant}): the key must be at least ${MIN_ENV_KEY_LENGTH} visible ASCII characters (generate one with \`probnes keys create\` or \`openssl rand -base64 32\`)` });
    }
    const keyHash = hashApiKey(key);
    if (seen.has(keyHash)) return ctx.addIssue({ code: 'custom', message: `${where} (tenant ${tenant}): the same key appears twice` });
    seen.add(keyHash);
    keys.push({ tenantId: tenant, keyHash });
  });
  return keys;
});

export const flagVar = (def: 'true' | 'false') => z.enum(['true', 'false'], { error: 'must be true or false' }).default(def);
