/** Tampering with page tokens (base64url body, '.', base64url signature). */
import fc from 'fast-check';

/** A token with one character changed, cut short, extended, or its halves swapped with another listing's. */
export const tamper = fc.record({ i: fc.nat(), c: fc.constantFrom('A', 'a', '0', '.', '-', '_', '=', '%', ' '), how: fc.constantFrom('flip', 'cut', 'append', 'swap-sig', 'swap-body', 'double') });

export function tampered(token: string, other: string, t: { i: number; c: string; how: string }): string {
  const i = t.i % token.length;
  const [body, sig] = token.split('.') as [string, string];
  const [obody, osig] = other.split('.') as [string, string];
  switch (t.how) {
    case 'flip':
      return token.slice(0, i) + (token[i] === t.c ? 'B' : t.c) + token.slice(i + 1);
    case 'cut':
      return token.slice(0, Math.max(1, i));
    case 'append':
      return token + t.c;
    case 'swap-sig':
      return `${body}.${osig}`;
    case 'swap-body':
      return `${obody}.${sig}`;
    default:
      return `${token}.${token}`;
  }
}

