/**
 * The dashboard on a server that requires API keys: its pages load without a key, the API's 401
 * is shown with a request for one, and a pasted key is kept in localStorage and sent as Bearer.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { hashApiKey } from '../../src/domain/auth/api-keys.js';
import { SqliteStorage, type Storage } from '../../src/storage/index.js';
import { studyBody } from '../helpers/app.js';
import { CHROMIUM, CHROMIUM_ARGS, chromiumPresent } from '../helpers/requirements.js';

const hasChromium = chromiumPresent();
const KEY = 'pk_dashboard_test_key_0123456789';

let app: FastifyInstance;
let storage: Storage;
let browser: Browser;
let base: string;

beforeAll(async () => {
  if (!hasChromium) return;
  storage = SqliteStorage.open(':memory:');
  await storage.ensureTenant('team-a', new Date().toISOString());
  app = await buildApp({
    config: { bodyLimit: 1024 * 1024, requestTimeoutMs: 30_000 },
    storage,
    auth: { envKeys: [{ tenantId: 'team-a', keyHash: hashApiKey(KEY) }], allowOpen: false },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const res = await app.inject({ method: 'POST', url: '/v1/studies', headers: { authorization: `Bearer ${KEY}` }, payload: studyBody({ name: 'team-a-study' }) });
  expect(res.statusCode).toBe(201);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: CHROMIUM_ARGS,
  });
});

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await storage?.close();
});

describe.skipIf(!hasChromium)('dashboard with API keys', () => {
  it('serves its pages without a key, asks for one on 401, and uses the pasted key', async () => {
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    const res = await page.goto(`${base}/ui`);
    expect(res?.status()).toBe(200);
    await page.waitForSelector('#status.error');
    expect(await page.locator('#status').textContent()).toMatch(/needs an API key.*paste an API key above/);

    await page.fill('#api-key', KEY);
    await page.click('#key-form button');
    await page.waitForSelector('#studies tbody tr');
    expect(await page.locator('#studies tbody a').textContent()).toBe('team-a-study');
    expect(await page.evaluate(() => (globalThis as any).localStorage.getItem('probnes_api_key'))).toBe(KEY);

    // The key survives navigation: the study page loads with it.
    await page.click('#studies tbody a');
    await page.waitForSelector('body[data-loaded="true"]');
    expect(await page.locator('#study-name').textContent()).toBe('team-a-study');
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
