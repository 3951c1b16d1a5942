/**
 * receiptTimeouts (src/http/receipt-timeouts.ts), the http.Server options for REQUEST_TIMEOUT_MS,
 * against the rules its header states: the request bound as given; headersTimeout never longer than
 * it (Node swaps the two otherwise); the expiry check ten times per bound, at most every second and
 * at least every 25 ms (so a cut lands within 10 % of the bound, not up to Node's default 30 s after
 * it); and 0 or less turns the bound off, leaving Node's other defaults alone. Nothing tested the
 * function directly under mutation testing: an interval equal to the bound, or no short-circuit, passed.
 */
import { describe, expect, it } from 'vitest';
import { receiptTimeouts } from '../../src/http/receipt-timeouts.js';

describe('receiptTimeouts', () => {
  it.each([
    // bound (ms), expected check interval: ⌊bound/10⌋ clamped to [25, 1000]
    [100, 25],
    [250, 25],
    [260, 26],
    [1000, 100],
    [5000, 500],
    [9999, 999],
    [10_000, 1000],
    [30_000, 1000],
    [600_000, 1000],
  ])('a bound of %i ms is checked every %i ms', (bound, interval) => {
    const { requestTimeout, http } = receiptTimeouts(bound);
    expect(requestTimeout).toBe(bound);
    expect(http.requestTimeout).toBe(bound);
    expect(http.connectionsCheckingInterval).toBe(interval);
    // Within 10 % of the bound whenever the bound allows it (25 ms is the floor).
    if (bound >= 250) expect(http.connectionsCheckingInterval!).toBeLessThanOrEqual(bound / 10);
  });

  it('headersTimeout is Node\'s 60 s default, or the bound when that is shorter', () => {
    expect(receiptTimeouts(1000).http.headersTimeout).toBe(1000);
    expect(receiptTimeouts(59_999).http.headersTimeout).toBe(59_999);
    expect(receiptTimeouts(120_000).http.headersTimeout).toBe(60_000);
  });

  it.each([0, -1, -30_000])('a bound of %i turns the receipt bound off and sets nothing else', (bound) => {
    // Anything else would change Node's defaults: headersTimeout 0 would disable the headers
    // timeout as well, and a 25 ms check interval would wake the server for nothing.
    expect(receiptTimeouts(bound)).toEqual({ requestTimeout: 0, http: { requestTimeout: 0 } });
  });
});
