/**
 * Swagger UI under our Content-Security-Policy, in headless Chromium: /docs must render the
 * operations with no CSP violation reported in the console. Skipped when Chromium is missing (never with CI=true).
 */
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { makeTestApp } from '../helpers/app.js';
import { CHROMIUM, chromiumPresent } from '../helpers/requirements.js';

const hasChromium = chromiumPresent();

let app: FastifyInstance;
let browser: Browser;
let base: string;

beforeAll(async () => {
  if (!hasChromium) return;
  ({ app } = await makeTestApp());
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'] });
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe.skipIf(!hasChromium)('Swagger UI under the CSP', () => {
  it('renders the operations without CSP violations', async () => {
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || /Content Security Policy/i.test(m.text())) problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const res = await page.goto(`${base}/docs`, { waitUntil: 'networkidle' });
    expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.waitForSelector('.opblock', { timeout: 15_000 });
    const operations = await page.locator('.opblock').count();
    expect(operations).toBeGreaterThan(10);
    expect(await page.locator('.opblock-summary-path', { hasText: '/v1/studies/{study_id}/suggestions' }).count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  }, 60_000);
});
