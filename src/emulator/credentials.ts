/**
 * Issuing credentials: personal tokens, OAuth clients, access and refresh tokens.
 * Secrets are random; the ids the request log shows are not secrets.
 */
import type { UserRef } from './wire-types.ts';
import { ACCESS_TOKEN_PREFIX } from './auth.ts';
import type { IdGenerator } from './ids.ts';
import type { EmulatorState } from './state/records.ts';

/** A new OAuth client and the refresh token of its first authorisation. */
export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

/** What the token endpoint hands out (RFC 6749 §5.1). */
export interface AccessTokenGrant {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
}

export function createPersonalToken(
  state: EmulatorState,
  ids: IdGenerator,
  appIds: readonly string[],
  user: UserRef,
  token = `pat_${ids.secret(20)}`,
): string {
  state.credentials.personalTokens.set(token, { id: ids.objectId(), appIds: new Set(appIds), user });
  return token;
}

export function createOAuthClient(
  state: EmulatorState,
  ids: IdGenerator,
  appIds: readonly string[],
  user: UserRef,
  given: Partial<OAuthClientCredentials> = {},
): OAuthClientCredentials {
  const clientId = given.clientId ?? `client_${ids.secret(8)}`;
  const clientSecret = given.clientSecret ?? ids.secret(24);
  const refreshToken = given.refreshToken ?? `ort_${ids.secret(24)}`;
  state.credentials.oauthClients.set(clientId, { clientId, clientSecret, appIds: new Set(appIds), user });
  state.credentials.refreshTokens.set(refreshToken, clientId);
  return { clientId, clientSecret, refreshToken };
}

/**
 * Issues an access token and rotates the refresh token (RFC 6749 §6 allows it; the old
 * one stops working, which is what a client must be ready for).
 */
export function grantAccessToken(
  state: EmulatorState,
  ids: IdGenerator,
  clientId: string,
  oldRefreshToken: string | undefined,
  ttlMs: number,
  now: number,
): AccessTokenGrant {
  const accessToken = `${ACCESS_TOKEN_PREFIX}${ids.secret(24)}`;
  const refreshToken = `ort_${ids.secret(24)}`;
  state.credentials.accessTokens.set(accessToken, { clientId, expiresAt: now + ttlMs });
  if (oldRefreshToken !== undefined) state.credentials.refreshTokens.delete(oldRefreshToken);
  state.credentials.refreshTokens.set(refreshToken, clientId);
  return {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: Math.floor(ttlMs / 1000),
    refresh_token: refreshToken,
  };
}

/** Makes every access token issued so far expire now (tests of the refresh path). */
export function expireAccessTokens(state: EmulatorState, now: number): void {
  for (const access of state.credentials.accessTokens.values())
    access.expiresAt = Math.min(access.expiresAt, now);
}
