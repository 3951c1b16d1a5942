/**
 * Whether the server may listen where it was asked to. Without any API key the server is open
 * (every request acts as the default tenant), which is only safe when nothing but this machine can
 * reach it; on any other address it refuses to start unless the operator explicitly accepts that.
 */

/** Loopback names and addresses: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

/** A message explaining the refusal, or null when listening on `host` is fine. */
export function openBindingRefusal(host: string, hasKeys: boolean, allowInsecureOpen: boolean): string | null {
  if (hasKeys || allowInsecureOpen || isLoopbackHost(host)) return null;
  return (
    `refusing to listen on HOST=${host} without API keys: anyone who can reach it could read and change every study. ` +
    'Create a key (`probnes keys create --tenant NAME`) or set API_KEYS / API_KEYS_FILE, ' +
    'or listen on loopback (HOST=127.0.0.1), or set ALLOW_INSECURE_OPEN=true if the network is trusted.'
  );
}
