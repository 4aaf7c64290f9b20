/**
 * Headers on every answer of the ops server. The CSP allows what bull-board's page
 * loads (its own scripts and fonts, inline styles) from the dashboard alone (its Google
 * fonts link is cut, without-outside-fonts.ts) and nothing else: no inline
 * script, so a value that escaped the html template still could not run; no framing,
 * so a page cannot click through the dashboard under a decoy (clickjacking).
 */
import type { RequestHandler } from 'express';

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Sets the CSP, nosniff, no-referrer and no-framing headers, then goes on. */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.set({
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'x-frame-options': 'DENY',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
  });
  next();
};
