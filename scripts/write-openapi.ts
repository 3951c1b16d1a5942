/**
 * `npm run openapi`: build the app over an in-memory database and write the OpenAPI document to
 * openapi/openapi.yaml (checked in; test/http/openapi.test.ts fails when it drifts from the routes).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.js';
import { openApiYaml } from '../src/http/openapi.js';
import { SqliteStorage } from '../src/storage/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'openapi', 'openapi.yaml');

const storage = SqliteStorage.open(':memory:');
const app = await buildApp({ config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000 }, storage });
await app.ready();
fs.mkdirSync(path.dirname(out), { recursive: true });
fs.writeFileSync(out, openApiYaml(app));
await app.close();
await storage.close();
console.log(`wrote ${path.relative(root, out)}`);
