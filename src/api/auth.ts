import { createHash } from 'node:crypto';
import { ApiError, ConfigError, PLATFORM_ERROR_CODES, categoryOfCode } from '../ground/errors.ts';
import type { OAuthTokenStore, SharedTokens } from './oauth-token-store.ts';
import type { Transport } from './transport.ts';

/** The three authentication methods of spec §5. */
export type Credentials =
  | { kind: 'appkey'; appKey: string; sign: string }
  | { kind: 'token'; token: string; appId?: string }
  | {
      kind: 'oauth';
      tokenUrl: string;
      clientId: string;
      clientSecret: string;
      refreshToken: string;
      appId?: string;
      /** A still-valid access token, when the caller has one. */
      accessToken?: string;
      /** When that access token expires (epoch ms). */
      expiresAt?: number;
    };

/** The public platform's header prefix (platform-shapes §1 [C]). */
export const DEFAULT_HEADER_PREFIX = 'HAP-';

export interface AuthOptions {
  /**
   * Header prefix. The public platform's export declares `HAP-Appkey`, `HAP-Sign`, `HAP-Appid`
   * (platform-shapes §1 [C]); the seed spec wrote `APP-`.
   * @defaultValue 'HAP-'
   */
  headerPrefix?: string;
  /** Refresh this long before the access token expires. @defaultValue 60_000 */
  refreshSkewMs?: number;
  /**
   * OAuth only: tokens shared with the other processes of the same credential, so that
   * one refresh serves all and a rotated refresh token reaches every process.
   */
  tokenStore?: OAuthTokenStore;
  now?: () => number;
}

/** A snapshot of the headers used for one request, to tell a stale token from a fresh one. */
export interface AuthHeaders {
  headers: Record<string, string>;
  /** Generation of the access token these headers carry. */
  generation: number;
}

export interface Auth {
  /** Headers for a request, refreshing the OAuth access token first when it is about to expire. */
  headers(): Promise<AuthHeaders>;
  /**
   * The server said the token of `generation` expired (600100, 10105). Refreshes once,
   * however many requests report it: later callers of the same generation share the
   * refresh in flight, and callers of an older generation are already served.
   * Resolves false when the method cannot refresh (app key, personal token).
   */
  refresh(generation: number): Promise<boolean>;
  /** A non-secret identity of the credential (for the rate budget key and logs). */
  readonly identity: string;
  /** Number of refresh-token grants made (for tests and the run report). */
  readonly refreshCount: number;
}

interface TokenAnswer {
  access_token?: unknown;
  expires_in?: unknown;
  refresh_token?: unknown;
  error?: unknown;
  error_description?: unknown;
  error_code?: unknown;
  code?: unknown;
  error_msg?: unknown;
  msg?: unknown;
  data?: unknown;
}

function fingerprint(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 16);
}

/**
 * A non-secret identity of a credential (the rate budget key, logs): a fingerprint of
 * what names it, computed without a transport or a token request.
 */
export function credentialIdentity(credentials: Credentials): string {
  if (credentials.kind === 'appkey') return `appkey:${fingerprint('appkey', credentials.appKey)}`;
  if (credentials.kind === 'token')
    return `token:${fingerprint('token', credentials.token, credentials.appId ?? '')}`;
  return `oauth:${fingerprint('oauth', credentials.clientId, credentials.appId ?? '')}`;
}

/** Header values carrying credentials, for the logger's redaction list. */
export function credentialHeaderNames(prefix = DEFAULT_HEADER_PREFIX): string[] {
  return ['authorization', `${prefix}Sign`.toLowerCase(), `${prefix}Appkey`.toLowerCase()];
}

export function createAuth(credentials: Credentials, transport: Transport, options: AuthOptions = {}): Auth {
  const prefix = options.headerPrefix ?? DEFAULT_HEADER_PREFIX;
  const skew = options.refreshSkewMs ?? 60_000;
  const now = options.now ?? Date.now;

  if (credentials.kind === 'appkey') {
    const headers = { [`${prefix}Appkey`]: credentials.appKey, [`${prefix}Sign`]: credentials.sign };
    return {
      headers: () => Promise.resolve({ headers, generation: 0 }),
      refresh: () => Promise.resolve(false),
      identity: credentialIdentity(credentials),
      refreshCount: 0,
    };
  }

  if (credentials.kind === 'token') {
    const headers: Record<string, string> = { authorization: `Bearer ${credentials.token}` };
    if (credentials.appId !== undefined) headers[`${prefix}Appid`] = credentials.appId;
    return {
      headers: () => Promise.resolve({ headers, generation: 0 }),
      refresh: () => Promise.resolve(false),
      identity: credentialIdentity(credentials),
      refreshCount: 0,
    };
  }

  const oauth = credentials;
  let accessToken = oauth.accessToken;
  let expiresAt = oauth.expiresAt ?? 0;
  let refreshToken = oauth.refreshToken;
  let generation = 0;
  let refreshCount = 0;
  let inFlight: Promise<void> | undefined;

  /** Adopts tokens another process refreshed; false when they are no newer than ours. */
  function adopt(shared: SharedTokens | undefined): boolean {
    if (shared === undefined) return false;
    // Always take the newest refresh token: the one we hold may have been revoked.
    refreshToken = shared.refreshToken;
    if (shared.accessToken === accessToken || now() >= shared.expiresAt - skew) return false;
    accessToken = shared.accessToken;
    expiresAt = shared.expiresAt;
    generation += 1;
    return true;
  }

  async function refreshOnce(): Promise<void> {
    const store = options.tokenStore;
    if (store === undefined) return grant();
    await store.exclusive(async () => {
      if (adopt(await store.load())) return;
      await grant();
      await store.save({ accessToken: accessToken ?? '', expiresAt, refreshToken });
    });
  }

  async function grant(): Promise<void> {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: oauth.clientId,
      client_secret: oauth.clientSecret,
    });
    refreshCount += 1;
    const res = await transport.send({
      method: 'POST',
      path: oauth.tokenUrl,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      isWrite: false,
    });
    const answer = (
      res.json && typeof res.body === 'object' && res.body !== null ? res.body : {}
    ) as TokenAnswer;
    const payload = (
      typeof answer.data === 'object' && answer.data !== null ? answer.data : answer
    ) as TokenAnswer;
    if (res.status >= 200 && res.status < 300 && typeof payload.access_token === 'string') {
      accessToken = payload.access_token;
      const ttlSeconds =
        typeof payload.expires_in === 'number' ? payload.expires_in : Number(payload.expires_in);
      expiresAt = now() + (Number.isFinite(ttlSeconds) ? ttlSeconds * 1000 : 3_600_000);
      // Rotated refresh tokens (RFC 6749 §6) replace the old one.
      if (typeof payload.refresh_token === 'string' && payload.refresh_token !== '')
        refreshToken = payload.refresh_token;
      generation += 1;
      return;
    }
    throw tokenError(res.status, answer, oauth.tokenUrl);
  }

  function ensureFresh(): Promise<void> {
    inFlight ??= refreshOnce().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  }

  return {
    async headers() {
      if (accessToken === undefined || now() >= expiresAt - skew) await ensureFresh();
      const headers: Record<string, string> = { authorization: `Bearer ${accessToken ?? ''}` };
      if (oauth.appId !== undefined) headers[`${prefix}Appid`] = oauth.appId;
      return { headers, generation };
    },
    async refresh(staleGeneration) {
      if (staleGeneration === generation) await ensureFresh();
      else if (inFlight !== undefined) await inFlight;
      return true;
    },
    identity: credentialIdentity(oauth),
    get refreshCount() {
      return refreshCount;
    },
  };
}

/** OAuth flow failures are configuration problems; the message names the fix, never a secret. */
function tokenError(status: number, answer: TokenAnswer, tokenUrl: string): Error {
  const rawCode = answer.error_code ?? answer.code;
  const code = typeof rawCode === 'number' ? rawCode : undefined;
  const oauthError = typeof answer.error === 'string' ? answer.error : undefined;
  const where = `OAuth token endpoint ${new URL(tokenUrl).origin}${new URL(tokenUrl).pathname}`;
  if (code === 600112 || oauthError === 'invalid_client') {
    return new ConfigError(
      `${where} rejected the client credentials (600112): check ROWBRIDGE_OAUTH_CLIENT_ID and ROWBRIDGE_OAUTH_CLIENT_SECRET`,
    );
  }
  if (code === 600113) {
    return new ConfigError(
      `${where} refused this machine's IP (600113): add it to the OAuth application's IP allow-list`,
    );
  }
  if (code === 600102 || code === 600103 || oauthError === 'invalid_grant') {
    return new ApiError(
      `${where} refused the refresh token (${code ?? oauthError}): re-authorize and set ROWBRIDGE_OAUTH_REFRESH_TOKEN`,
      {
        method: 'POST',
        path: tokenUrl,
        category: 'auth',
        httpStatus: status,
        ...(code ? { errorCode: code } : {}),
      },
    );
  }
  if (code !== undefined && categoryOfCode(code) !== 'unknown') {
    const meaning = PLATFORM_ERROR_CODES[code]?.meaning ?? '';
    const category = categoryOfCode(code);
    const message = `${where} failed with ${code} (${meaning})`;
    if (category === 'config') return new ConfigError(`${message}: check the ROWBRIDGE_OAUTH_* settings`);
    return new ApiError(message, {
      method: 'POST',
      path: tokenUrl,
      category,
      errorCode: code,
      httpStatus: status,
    });
  }
  const category = status >= 500 ? 'transient' : 'config';
  if (category === 'config') {
    return new ConfigError(
      `${where} answered HTTP ${status}${oauthError ? ` (${oauthError})` : ''}: check ROWBRIDGE_OAUTH_TOKEN_URL and the OAuth settings`,
    );
  }
  return new ApiError(`${where} answered HTTP ${status}`, {
    method: 'POST',
    path: tokenUrl,
    category,
    httpStatus: status,
  });
}
