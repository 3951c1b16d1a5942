/**
 * `probnes keys create|list|revoke`: API-key management against the database named by
 * DATABASE_PATH (the same variable the server reads). `create` writes the key to stdout, alone on
 * its line, so `KEY=$(probnes keys create --tenant acme)` works; everything else goes to stderr.
 * The key is not recoverable afterwards: only its SHA-256 is stored (see src/domain/api-keys.ts).
 */
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, loadConfig } from '../config.js';
import { ApiKeyService } from '../domain/api-keys.js';
import { ValidationError } from '../domain/errors.js';
import { SqliteStorage, type ApiKeyRecord } from '../storage/index.js';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
  env: NodeJS.ProcessEnv;
}

class UsageError extends Error {}

function parse(args: string[], options: ParseArgsConfig['options'], positionals: number) {
  let parsed;
  try {
    parsed = parseArgs({ args, options, allowPositionals: positionals > 0, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.positionals.length !== positionals) throw new UsageError(`expected ${positionals} argument${positionals === 1 ? '' : 's'}, got ${parsed.positionals.length}`);
  return { values: parsed.values as Record<string, string | boolean | undefined>, positionals: parsed.positionals };
}

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
  let storage: SqliteStorage | null = null;
  try {
    const config = loadConfig(io.env);
    storage = SqliteStorage.open(config.databasePath);
    return await run(new ApiKeyService({ storage }), sub, args, io);
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`probnes keys: ${err.message}\nusage: probnes keys create --tenant NAME [--label TEXT] | list [--json] | revoke ID\n`);
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
