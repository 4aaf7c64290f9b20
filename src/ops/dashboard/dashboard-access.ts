/**
 * Who may see the dashboard and change queues through it (issue 10). One guard in
 * front of every dashboard route, in this order:
 *
 * 1. Host allow-list (421): a page on evil.example that rebinds its DNS to 127.0.0.1
 *    reaches a loopback dashboard with `Host: evil.example`, which no browser lets the
 *    page forge; refusing unknown hosts is what stops DNS rebinding.
 * 2. Authentication (401): a bearer token, or HTTP basic auth with a user's scrypt hash
 *    (or any user name and the token as the password, so a browser can log in). Logins
 *    are throttled (429, login-throttle.ts): an address over its failure budget waits,
 *    and at most two password checks run at once.
 * 3. Writes: refused (405) unless `allowWrites`; when allowed, a state-changing request
 *    must come from a page of this dashboard (Origin/Sec-Fetch-Site) or carry the
 *    `X-Rowbridge-Csrf` header no cross-site form or `text/plain` fetch can add, and must
 *    not have a form or text body. Browsers send basic credentials along with cross-site
 *    requests, so authentication alone does not stop CSRF.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { ConfigError } from '../../ground/errors.ts';
import { createHostAllowList, hostName, hostNames } from '../host-allow-list.ts';
import { createLoginThrottle } from './login-throttle.ts';
import type { LoginLimits } from './login-throttle.ts';
import { isPasswordHash, verifyPassword } from './password-hash.ts';

/** The header a script or tool sets on a state-changing request (any non-empty value). */
export const CSRF_HEADER = 'x-rowbridge-csrf';

/** Options of {@link createDashboardAccess}; the strings are the settings as written. */
export interface DashboardAccessOptions {
  /** `ROWBRIDGE_DASHBOARD_TOKEN`. */
  token?: string | undefined;
  /** `ROWBRIDGE_DASHBOARD_USERS`: `alice:scrypt$salt$hash,bob:...`. */
  users?: string | undefined;
  /** `ROWBRIDGE_DASHBOARD_HOSTS`: extra host names, comma-separated. */
  hosts?: string | undefined;
  /** The address the server binds: a non-loopback one requires a token or users. */
  bindHost: string;
  /** Let bull-board pause, add, retry, clean, obliterate. @defaultValue false */
  allowWrites?: boolean;
  /** Limits of password checks and failed logins. @defaultValue see {@link LoginLimits} */
  logins?: LoginLimits | undefined;
}

/** The guard and what it decided about the dashboard. */
export interface DashboardAccess {
  guard: RequestHandler;
  /** Whether writes are enabled (bull-board's buttons and job data then show). */
  allowWrites: boolean;
  /** Whether a token or users are configured. */
  authenticated: boolean;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const CHALLENGE = 'Basic realm="rowbridge dashboard", charset="UTF-8"';
/** Successful basic logins, so scrypt does not run on every asset a page loads. */
const LOGIN_CACHE_MS = 60_000;
const LOGIN_CACHE_SIZE = 256;
/** Verified for unknown user names, so they cost what a known one does. */
const DUMMY_HASH = 'scrypt$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** Whether a bind address only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Equal-length digests compared in constant time, so timing tells nothing of the token. */
function sameSecret(given: string, expected: Buffer): boolean {
  return timingSafeEqual(digest(given), expected);
}

function parseUsers(text: string | undefined): Map<string, string> {
  const users = new Map<string, string>();
  for (const entry of (text ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const at = entry.indexOf(':');
    const name = at < 0 ? entry : entry.slice(0, at);
    // The hash is not echoed: it is a secret setting.
    if (at <= 0 || !isPasswordHash(entry.slice(at + 1))) {
      throw new ConfigError(
        `ROWBRIDGE_DASHBOARD_USERS: the entry for "${at <= 0 ? '?' : name}" must be name:scrypt$salt$hash (make one with: rowbridge dashboard --hash-password)`,
      );
    }
    users.set(name, entry.slice(at + 1));
  }
  return users;
}

function refuse(res: Response, status: number, message: string, headers: Record<string, string> = {}): void {
  res.status(status).set(headers).set('cache-control', 'no-store').type('text').send(`${message}\n`);
}

/**
 * Builds the guard. Throws a ConfigError when the server would listen beyond loopback
 * without a token or users: an open dashboard on a network shows personal data.
 */
export function createDashboardAccess(options: DashboardAccessOptions): DashboardAccess {
  const token = options.token === undefined || options.token === '' ? undefined : digest(options.token);
  const users = parseUsers(options.users);
  const authenticated = token !== undefined || users.size > 0;
  const allowWrites = options.allowWrites === true;
  if (!authenticated && !isLoopback(options.bindHost)) {
    throw new ConfigError(
      `the dashboard listens on ${options.bindHost}, beyond this machine, and has no login: set ROWBRIDGE_DASHBOARD_TOKEN ` +
        `(at least 16 characters) or ROWBRIDGE_DASHBOARD_USERS, or bind to 127.0.0.1`,
    );
  }
  const hosts = createHostAllowList({ bindHost: options.bindHost, names: [options.hosts] });
  // Names a reverse proxy serves the dashboard under: its pages' Origin is one of them
  // even when the proxy forwards another Host.
  const proxied = new Set(hostNames([options.hosts]));
  const logins = new Map<string, number>();
  const throttle = createLoginThrottle(options.logins);

  /** `busy` when the password would need a check and the checks are all taken. */
  async function basicLogin(header: string): Promise<boolean | 'busy'> {
    const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0) return false;
    const name = decoded.slice(0, colon);
    const password = decoded.slice(colon + 1);
    if (token !== undefined && sameSecret(password, token)) return true;
    // Without users no password but the token can succeed: no scrypt to spend.
    if (users.size === 0) return false;
    const key = digest(header).toString('hex');
    if ((logins.get(key) ?? 0) > Date.now()) return true;
    // An unknown user still costs one scrypt, so timing does not list the user names.
    const checked = throttle.tryCheck(() => verifyPassword(password, users.get(name) ?? DUMMY_HASH));
    if (checked === undefined) return 'busy';
    const ok = (await checked) && users.has(name);
    if (ok) {
      if (logins.size >= LOGIN_CACHE_SIZE) logins.clear();
      logins.set(key, Date.now() + LOGIN_CACHE_MS);
    }
    return ok;
  }

  function credentialsOf(header: string): Promise<boolean | 'busy'> | boolean {
    if (/^bearer /i.test(header)) return token !== undefined && sameSecret(header.slice(7).trim(), token);
    if (/^basic /i.test(header)) return basicLogin(header);
    return false;
  }

  /** Answers 401 or 429 and returns false unless the request is logged in. */
  async function authenticate(req: Request, res: Response): Promise<boolean> {
    if (!authenticated) return true;
    const header = req.get('authorization') ?? '';
    // A request without credentials is a browser asking for the login prompt, not a guess.
    if (header === '') {
      refuse(res, 401, 'authentication required', { 'www-authenticate': CHALLENGE });
      return false;
    }
    const address = req.socket.remoteAddress;
    const lockedMs = throttle.lockedForMs(address ?? '');
    if (lockedMs > 0) {
      const seconds = Math.ceil(lockedMs / 1000);
      refuse(res, 429, `too many failed logins from this address: try again in ${seconds} s`, {
        'retry-after': String(seconds),
      });
      return false;
    }
    const verdict = await credentialsOf(header);
    if (verdict === 'busy') {
      refuse(res, 429, 'too many logins are being checked at once: try again in a second', {
        'retry-after': '1',
      });
      return false;
    }
    if (!verdict) {
      throttle.failed(address ?? '');
      refuse(res, 401, 'authentication required', { 'www-authenticate': CHALLENGE });
      return false;
    }
    throttle.succeeded(address ?? '');
    return true;
  }

  /** Why a state-changing request is refused, or undefined when it may go on. */
  function crossSiteReason(req: Request, host: string): string | undefined {
    const site = req.get('sec-fetch-site');
    if (site !== undefined && site !== 'same-origin' && site !== 'none')
      return `a ${site} request may not change the dashboard`;
    const origin = req.get('origin');
    if (origin !== undefined && origin !== 'null') {
      let originHost: string;
      try {
        originHost = new URL(origin).host;
      } catch {
        return 'the Origin header is not a URL';
      }
      if (originHost.toLowerCase() !== host.toLowerCase() && !proxied.has(hostName(originHost))) {
        return `a request from ${origin} may not change the dashboard`;
      }
    } else if (origin === 'null' || req.get(CSRF_HEADER) === undefined) {
      return `a state-changing request needs the ${CSRF_HEADER} header (or a same-origin Origin)`;
    }
    const type = (req.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    const hasBody = (req.get('content-length') ?? '0') !== '0' || req.get('transfer-encoding') !== undefined;
    if ((hasBody || type !== '') && type !== 'application/json') {
      return `content type "${type || 'none'}" is refused: send application/json`;
    }
    return undefined;
  }

  async function check(req: Request, res: Response): Promise<boolean> {
    const host = req.get('host') ?? '';
    if (!hosts.allows(host)) {
      refuse(
        res,
        421,
        `unknown host "${hostName(host)}": add it to ROWBRIDGE_DASHBOARD_HOSTS to serve the dashboard under that name`,
      );
      return false;
    }
    if (!(await authenticate(req, res))) return false;
    if (SAFE_METHODS.has(req.method)) return true;
    if (!allowWrites) {
      refuse(res, 405, 'the dashboard is read-only: start it with --allow-writes to change queues', {
        allow: 'GET, HEAD',
      });
      return false;
    }
    const reason = crossSiteReason(req, host);
    if (reason !== undefined) {
      refuse(res, 403, reason);
      return false;
    }
    return true;
  }

  const guard: RequestHandler = (req, res, next) => {
    check(req, res).then(
      (ok) => {
        if (ok) next();
      },
      (err: unknown) => next(err),
    );
  };

  return { guard, allowWrites, authenticated };
}
