/**
 * `probnes keys create|list|revoke`: API-key management against the database named by
 * DATABASE_PATH (the same variable the server reads). `create` writes the key to stdout, alone on
 * its line, so `KEY=$(probnes keys create --tenant acme)` works; everything else goes to stderr.
 * The key is not recoverable afterwards: only its SHA-256 is stored (see src/domain/auth/api-keys.ts).
 */
import { ConfigError, loadConfig } from '../config.js';
import { ApiKeyService } from '../domain/auth/api-keys.js';
import { ValidationError } from '../domain/common/errors.js';
import { SqliteStorage, type ApiKeyRecord } from '../storage/index.js';
import { parse, UsageError, type CliIo } from './common.js';

export type { CliIo } from './common.js';

export const KEYS_USAGE = `usage: probnes keys <subcommand>

Manages API keys in the database named by DATABASE_PATH (default ./data/probnes.db), the same file
the server uses. Only each key's SHA-256 is stored.

subcommands:
  create --tenant NAME [--label TEXT]   create a key for a tenant; the key is printed once, on stdout alone
  list [--json]                         list keys: ids, tenants, labels, dates (never the keys)
  revoke ID                             revoke a key; requests with it get 401 from then on

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

example:
  probnes keys revoke key_0123456789abcdef
`,
};

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
      const { key, record } = await service.create(values.tenant, typeof values.label === 'string' ? values.label : null);
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
    default:
      throw new UsageError(sub === undefined ? 'keys needs a subcommand: create, list or revoke' : `unknown keys subcommand ${JSON.stringify(sub)}`);
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
      io.err(`probnes keys: ${err.message}\nusage: probnes keys create --tenant NAME [--label TEXT] | list [--json] | revoke ID  (see probnes keys --help)\n`);
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
