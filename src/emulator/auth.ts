/**
 * Authentication of spec §5 as platform notes §1 describe it: app key + static sign,
 * personal tokens and OAuth access tokens as `Authorization: Bearer`, and the
 * `Appid` header naming the application for `/v3/app/...` endpoints.
 *
 * Codes: no credentials or an unknown app key → 10101; wrong sign → 10102; unknown
 * personal token → 10105; an OAuth access token that is unknown or expired → 600100
 * (OAuth tokens are recognisable by their `oat_` prefix). A credential is valid only
 * for its own applications: using it with another app's `Appid` is 10005 for every
 * kind of credential (one code, so a client needs one rule).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { UserRef } from './wire-types.ts';
import { EmulatorError, paramError } from './emulator-error.ts';
import type { AppRecord, EmulatorState } from './state/records.ts';

/** Prefix of OAuth access tokens, so an unknown one can be told from an unknown personal token. */
export const ACCESS_TOKEN_PREFIX = 'oat_';

/** Who is calling. `credentialId` is an identifier, never the secret. */
export interface Principal {
  credentialId: string;
  kind: 'appkey' | 'personal' | 'oauth';
  user: UserRef;
  /** Applications the credential may act on. */
  appIds: ReadonlySet<string>;
  /** Lets a token act on an application it created; app keys stay bound to their own app. */
  grantApp: ((appId: string) => void) | undefined;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name.toLowerCase()];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first === '' ? undefined : first;
}

export function authenticate(
  state: EmulatorState,
  headers: IncomingHttpHeaders,
  prefix: string,
  now: number,
): Principal {
  const appKey = header(headers, `${prefix}Appkey`);
  if (appKey !== undefined) {
    const appId = state.credentials.appKeys.get(appKey);
    const app = appId === undefined ? undefined : state.apps.get(appId);
    if (app === undefined) throw new EmulatorError(10101, `unknown app key in header ${prefix}Appkey`);
    if (header(headers, `${prefix}Sign`) !== app.sign) {
      throw new EmulatorError(10102, `header ${prefix}Sign does not match the app key's sign`);
    }
    return {
      credentialId: `appkey:${app.id}`,
      kind: 'appkey',
      user: app.owner,
      appIds: new Set([app.id]),
      grantApp: undefined,
    };
  }

  const authorization = header(headers, 'authorization');
  const token = authorization?.match(/^Bearer\s+(\S+)\s*$/i)?.[1];
  if (token === undefined) {
    throw new EmulatorError(
      10101,
      `no credentials: send ${prefix}Appkey and ${prefix}Sign, or Authorization: Bearer <token>`,
    );
  }
  if (token.startsWith(ACCESS_TOKEN_PREFIX)) {
    const access = state.credentials.accessTokens.get(token);
    const client = access === undefined ? undefined : state.credentials.oauthClients.get(access.clientId);
    if (access === undefined || client === undefined)
      throw new EmulatorError(600100, 'OAuth access token is invalid');
    if (now >= access.expiresAt)
      throw new EmulatorError(600100, 'OAuth access token has expired; refresh it');
    return {
      credentialId: `oauth:${client.clientId}`,
      kind: 'oauth',
      user: client.user,
      appIds: client.appIds,
      grantApp: (id) => client.appIds.add(id),
    };
  }
  const personal = state.credentials.personalTokens.get(token);
  if (personal === undefined) throw new EmulatorError(10105, 'personal access token is invalid');
  return {
    credentialId: `pat:${personal.id}`,
    kind: 'personal',
    user: personal.user,
    appIds: personal.appIds,
    grantApp: (id) => personal.appIds.add(id),
  };
}

/** The application an `/v3/app/...` request acts on. */
export function resolveApp(
  state: EmulatorState,
  principal: Principal,
  headers: IncomingHttpHeaders,
  prefix: string,
): AppRecord {
  const named = header(headers, `${prefix}Appid`);
  let appId: string;
  if (principal.kind === 'appkey') {
    const own = principal.appIds.values().next().value as string;
    if (named !== undefined && named !== own) {
      throw new EmulatorError(
        10005,
        `the app key belongs to another application than ${prefix}Appid ${named}`,
      );
    }
    appId = own;
  } else {
    if (named === undefined)
      throw paramError(`header ${prefix}Appid is required with a bearer token on /v3/app endpoints`);
    if (!principal.appIds.has(named)) {
      throw new EmulatorError(10005, `the token is not authorised for application ${named}`);
    }
    appId = named;
  }
  const app = state.apps.get(appId);
  if (app === undefined) throw new EmulatorError(10007, `application ${appId} does not exist or was deleted`);
  return app;
}
