/**
 * Keeps credentials out of error messages: URLs are shown without user info and with
 * their credential query parameters masked (ground/mask-secrets.ts, the masking the
 * dashboard shows job specs with), and any known secret value (a resolved header, a
 * connection URL, its password) that a driver echoes back is masked.
 */
import { maskUrl } from '../../ground/mask-secrets.ts';

/**
 * `https://user:pw@host/path?api_key=k&page=2#x` → `https://host/path?api_key=••••••&page=2`;
 * a non-URL becomes `<invalid url>`.
 */
export function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return maskUrl(`${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search}`);
  } catch {
    return '<invalid url>';
  }
}

/** Replaces every occurrence of each secret (of 4+ characters) in `text` with `***`. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so a URL is masked whole before its password inside it.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    // Very short values (a port, "1") would shred the message without hiding anything.
    if (secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}

/** The secrets in a connection URL: the URL itself, its password and its decoded password. */
export function urlSecrets(url: string): string[] {
  const secrets = [url];
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') secrets.push(parsed.password, decodeURIComponent(parsed.password));
  } catch {
    // An unparsable URL is masked whole.
  }
  return secrets;
}
