/**
 * `probnes keys create|list|revoke|open`: API-key management against the database named by
 * DATABASE_PATH (the same variable the server reads). `create` writes the key to stdout, alone on
 * its line, so `KEY=$(probnes keys create --tenant acme)` works; everything else goes to stderr.
 * The key is not recoverable afterwards: only its SHA-256 is stored (see src/domain/auth/api-keys.ts).
 */
import { ConfigError, loadConfig } from '../config.js';
import { ApiKeyService } from '../domain/auth/api-keys.js';
import { ValidationError } from '../domain/common/errors.js';
// The SQLite module alone: the storage index would also load the PostgreSQL driver.
import { SqliteStorage } from '../storage/sqlite/sqlite-storage.js';
import type { ApiKeyRecord } from '../storage/storage.js';
import { parse, UsageError, type CliIo } from './common.js';

export type { CliIo } from './common.js';

export const KEYS_USAGE = `usage: probnes keys <subcommand>

Manages API keys in the database named by DATABASE_PATH (default ./data/probnes.db), the same file
the server uses. Only each key's SHA-256 is stored.

subcommands:
  create --tenant NAME [--label TEXT]   create a key for a tenant; the key is printed once, on stdout alone
  list [--json]                         list keys: ids, tenants, labels, dates (never the keys)
  revoke ID                             revoke a key; requests with it get 401 from then on
  open --confirm                        let requests without a key in again (as tenant default);
                                        only when no key is active. Revoking the last key does not
                                        do this: a server that had keys stays keyed.

Studies created while the server ran without keys belong to tenant "default": create a key for
tenant default to reach them.

examples:
  KEY=$(probnes keys create --tenant acme --label "ci runner")
  probnes keys list
  DATABASE_PATH=/data/probnes.db probnes keys revoke key_0123456789abcdef
`;

const SUB_USAGE: Record<string, string> = {
  create: `usage: probnes keys create --tenant NAME [--label TEXT]

Creates an API key for tenant NAME (created if new; letters, digits, '.', '_', '-'). The key goes to
stdout alone on its line, the rest to stderr. It cannot be shown again: only its SHA-256 is stored.

example:
  KEY=$(probnes keys create --tenant acme --label "ci runner")
`,
  list: `usage: probnes keys list [--json]

Lists every key (id, tenant, label, created, revoked); --json prints them as a JSON array.

example:
  probnes keys list --json
`,
  revoke: `usage: probnes keys revoke ID

Revokes the key with this id (from probnes keys list); requests bearing it get 401 from then on.
Revoking the last key leaves the server keyed (every request gets 401); see probnes keys open.

example:
  probnes keys revoke key_0123456789abcdef
`,
  open: `usage: probnes keys open --confirm

Lets requests without a key in again: they act as tenant "default", and the server binds only to
loopback unless ALLOW_INSECURE_OPEN=true. Refused while any key is active (revoke them first). A
server that had keys otherwise stays keyed, even with every key revoked. A running server follows
within a second.

example:
  probnes keys open --confirm
`,
};

/** Said when the first key of another tenant closes the server on studies made while it was open. */
const DEFAULT_STUDIES_NOTE = (tenant: string) => `note: studies created while the server ran without keys belong to tenant "default", and requests with this key (tenant ${tenant}) will not see them.
  To reach them, create a key for that tenant:  probnes keys create --tenant default
  To move one to ${tenant}: export it with the default key (GET /v1/studies/ID/export) and import it with this one (POST /v1/studies/import).
`;

function table(keys: ApiKeyRecord[]): string {
  const rows = [['ID', 'TENANT', 'LABEL', 'CREATED', 'REVOKED'], ...keys.map((k) => [k.id, k.tenantId, k.label ?? '-', k.createdAt, k.revokedAt ?? '-'])];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => cell.padEnd(widths[c]!)).join('  ').trimEnd()).join('\n') + '\n';
}

async function run(service: ApiKeyService, sub: string | undefined, args: string[], io: CliIo): Promise<number> {
  switch (sub) {
    case 'create': {
      const { values } = parse(args, { tenant: { type: 'string' }, label: { type: 'string' } }, 0);
      if (typeof values.tenant !== 'string') throw new UsageError('--tenant NAME is required');
      const { key, record, defaultStudiesUnreachable } = await service.create(values.tenant, typeof values.label === 'string' ? values.label : null);
      if (defaultStudiesUnreachable) io.err(DEFAULT_STUDIES_NOTE(record.tenantId));
      io.err(`created key ${record.id} for tenant ${record.tenantId}; it is shown only now, store it safely:\n`);
      io.out(`${key}\n`);
      return 0;
    }
    case 'list': {
      const { values } = parse(args, { json: { type: 'boolean' } }, 0);
      const keys = await service.list();
      // Hashes stay in the database too: they are not secret enough to print, nor useful to anyone.
      const visible = keys.map(({ keyHash: _hash, ...k }) => k);
      io.out(values.json ? `${JSON.stringify(visible, null, 2)}\n` : table(keys));
      return 0;
    }
    case 'revoke': {
      const { positionals } = parse(args, {}, 1);
      const id = positionals[0]!;
      if (!(await service.revoke(id))) {
        io.err(`probnes: no active key with id ${JSON.stringify(id)} (unknown or already revoked)\n`);
        return 1;
      }
      io.err(`revoked key ${id}\n`);
      return 0;
    }
    case 'open': {
      const { values } = parse(args, { confirm: { type: 'boolean' } }, 0);
      if (values.confirm !== true) throw new UsageError('open lets every request without a key in as tenant default; say so with --confirm');
      if (!(await service.reopen())) {
        io.err('probnes: keys are still active; revoke them first (probnes keys list, probnes keys revoke ID)\n');
        return 1;
      }
      io.err('requests without a key are let in again, as tenant default (only on loopback unless ALLOW_INSECURE_OPEN=true); a running server follows within a second\n');
      return 0;
    }
    default:
      throw new UsageError(sub === undefined ? 'keys needs a subcommand: create, list, revoke or open' : `unknown keys subcommand ${JSON.stringify(sub)}`);
  }
}

export async function runKeys(argv: string[], io: CliIo): Promise<number> {
  const [sub, ...args] = argv;
  // Help needs no database (and must not create one).
  if (sub === '--help' || sub === '-h' || sub === 'help') {
    io.out(KEYS_USAGE);
    return 0;
  }
  if (sub !== undefined && sub in SUB_USAGE && (args.includes('--help') || args.includes('-h'))) {
    io.out(SUB_USAGE[sub]!);
    return 0;
  }
  let storage: SqliteStorage | null = null;
  try {
    const config = loadConfig(io.env);
    storage = SqliteStorage.open(config.databasePath);
    return await run(new ApiKeyService({ storage }), sub, args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`probnes keys: ${err.message}\nusage: probnes keys create --tenant NAME [--label TEXT] | list [--json] | revoke ID | open --confirm  (see probnes keys --help)\n`);
      return 2;
    }
    if (err instanceof ValidationError) {
      io.err(`probnes keys: ${err.errors.map((e) => `${e.path.slice(1)} ${e.message}`).join('; ')}\n`);
      return 2;
    }
    if (err instanceof ConfigError) {
      io.err(`probnes: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await storage?.close();
  }
}
