/**
 * POST /oauth2/token with the refresh-token grant. Success is the RFC 6749 JSON
 * `{access_token, token_type, expires_in, refresh_token}`; failure is the platform
 * envelope with the OAuth codes of spec §7 (600000 bad parameters, 600112 bad client
 * credentials, 600102 bad refresh token) plus the RFC's `error` word, so clients of
 * either convention understand it. Failures are HTTP 200 like every business failure
 * of the platform (platform notes §1).
 */
import { timingSafeEqual } from 'node:crypto';
import { grantAccessToken } from './credentials.ts';
import type { AccessTokenGrant } from './credentials.ts';
import { EmulatorError, errorEnvelope } from './emulator-error.ts';
import type { EmulatorEnvelope } from './emulator-error.ts';
import type { IdGenerator } from './ids.ts';
import type { EmulatorState } from './state/records.ts';

const RFC_ERROR: Record<number, string> = {
  600000: 'invalid_request',
  600102: 'invalid_grant',
  600112: 'invalid_client',
  600113: 'unauthorized_client',
};

export type TokenAnswer =
  AccessTokenGrant | (EmulatorEnvelope & { error: string; error_description: string });

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Reads a form-urlencoded or JSON body into string parameters. */
export function parseTokenParams(raw: string, contentType: string | undefined): Record<string, string> {
  if (contentType?.includes('application/json') === true) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw === '' ? '{}' : raw);
    } catch {
      throw new EmulatorError(600000, 'token request body is not valid JSON');
    }
    if (typeof parsed !== 'object' || parsed === null)
      throw new EmulatorError(600000, 'token request body must be an object');
    return Object.fromEntries(
      Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

export function tokenErrorAnswer(error: EmulatorError): TokenAnswer {
  return {
    ...errorEnvelope(error.errorCode, error.message),
    error: RFC_ERROR[error.errorCode] ?? 'invalid_request',
    error_description: error.message,
  };
}

export function handleTokenRequest(
  state: EmulatorState,
  ids: IdGenerator,
  params: Record<string, string>,
  ttlMs: number,
  now: number,
): AccessTokenGrant {
  const grantType = params['grant_type'];
  if (grantType !== 'refresh_token') {
    throw new EmulatorError(
      600000,
      `grant_type must be "refresh_token" (the only grant the emulator supports), got ${JSON.stringify(grantType ?? null)}`,
    );
  }
  for (const name of ['refresh_token', 'client_id', 'client_secret']) {
    if ((params[name] ?? '') === '') throw new EmulatorError(600000, `token request is missing ${name}`);
  }
  const client = state.credentials.oauthClients.get(params['client_id']!);
  if (client === undefined || !sameSecret(client.clientSecret, params['client_secret']!)) {
    throw new EmulatorError(600112, 'client_id or client_secret is wrong');
  }
  const refreshToken = params['refresh_token']!;
  if (state.credentials.refreshTokens.get(refreshToken) !== client.clientId) {
    throw new EmulatorError(600102, 'refresh token is invalid, revoked or already used');
  }
  return grantAccessToken(state, ids, client.clientId, refreshToken, ttlMs, now);
}
