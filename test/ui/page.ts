/** Browser pages for the dashboard's tests: a page that records what went wrong in it, and the charts' drag-to-zoom check. */
import type { Browser, Page } from 'playwright-core';
import { expect } from 'vitest';

/** A new page whose console errors, CSP reports, page errors and failed requests are collected in `errors`. */
export async function openPage(browser: Browser, width = 1280): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const errors: string[] = [];
  page.on('console', (m) => (m.type() === 'error' || /Content Security Policy/i.test(m.text())) && errors.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => errors.push(`page: ${e.message}`));
  page.on('requestfailed', (r) => errors.push(`request: ${r.url()} ${r.failure()?.errorText}`));
  return { page, errors };
}

/**
 * Dragging across the chart `selector` (its uPlot object) from `from` to `to` of the width of `box`
 * (its .u-over) narrows the x range to under half, and a double click restores it.
 */
export async function expectDragZoomAndReset(page: Page, selector: string, box: { x: number; y: number; width: number; height: number }, from: number, to: number): Promise<void> {
  const range = () => page.evaluate((sel) => {
    const s = (globalThis as any).document.querySelector(sel).__chart.scales.x;
    return [s.min, s.max] as number[];
  }, selector);
  const before = await range();
  await page.mouse.move(box.x + box.width * from, box.y + box.height * 0.5);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * to, box.y + box.height * 0.5, { steps: 5 });
  await page.mouse.up();
  const zoomed = await range();
  expect(zoomed[1]! - zoomed[0]!).toBeLessThan((before[1]! - before[0]!) * 0.5);
  await page.mouse.dblclick(box.x + box.width * 0.5, box.y + box.height * 0.5);
  expect(await range()).toEqual(before);
}
