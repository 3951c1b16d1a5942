/**
 * REQUEST_TIMEOUT_MS bounds the receipt of a whole request, headers and body: a client that trickles
 * its body a byte at a time gets a 408 and its connection closed once that time has passed since the
 * request began. Node enforces it (http.Server's requestTimeout), with two catches handled here:
 * - Node swaps headersTimeout and requestTimeout when the first is the longer (its default is
 *   60 s), so a requestTimeout below 60 s alone would only cut a body after 60 s; headersTimeout is
 *   therefore never longer than requestTimeout.
 * - Node looks for expired requests every connectionsCheckingInterval (30 s by default), so a
 *   request could run up to 30 s past its bound; it looks ten times per bound instead (at most once
 *   a second, at least every 25 ms), which keeps a cut within 10 % of the bound.
 * 0 turns the bound off, as for Node.
 */
import type { ServerOptions } from 'node:http';

const DEFAULT_HEADERS_TIMEOUT_MS = 60_000;

export function receiptTimeouts(requestTimeoutMs: number): { requestTimeout: number; http: ServerOptions } {
  if (requestTimeoutMs <= 0) return { requestTimeout: 0, http: { requestTimeout: 0 } };
  const http: ServerOptions = {
    requestTimeout: requestTimeoutMs,
    headersTimeout: Math.min(DEFAULT_HEADERS_TIMEOUT_MS, requestTimeoutMs),
    connectionsCheckingInterval: Math.min(1000, Math.max(25, Math.floor(requestTimeoutMs / 10))),
  };
  return { requestTimeout: requestTimeoutMs, http };
}
