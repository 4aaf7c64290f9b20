/**
 * The API v3 emulator: an HTTP server implementing spec §4 over an in-memory store, with
 * the platform's validation, authentication, limits and injectable faults.
 *
 * ```ts
 * const emulator = await startEmulator();
 * const { appId, appKey, sign } = emulator.createApp({ name: 'CRM' });
 * // clients call `${emulator.url}/v3/...`
 * await emulator.close();
 * ```
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CreateWorksheetInput, UserRef, WorksheetStructure } from './wire-types.ts';
import { applySeed } from './apply-seed.ts';
import { createOAuthClient, createPersonalToken, expireAccessTokens } from './credentials.ts';
import type { OAuthClientCredentials } from './credentials.ts';
import type { EmulatorDeps } from './deps.ts';
import { createFaultInjector } from './faults.ts';
import { createRequestListener } from './http-server.ts';
import type { RequestLogEntry } from './http-server.ts';
import { createIdGenerator } from './ids.ts';
import { createRequestLimits } from './limits.ts';
import { resolveOptions, validateOptions } from './options.ts';
import type { EmulatorOptions, ResolvedOptions, RuntimeOptions } from './options.ts';
import { createRouter } from './router.ts';
import { createAllRoutes } from './routes/all-routes.ts';
import { createApp } from './state/app-model.ts';
import { adminUser, createEmptyState } from './state/create-state.ts';
import { createStateView } from './state-view.ts';
import type { EmulatorStateView } from './state-view.ts';
import { structureView } from './worksheets/structure-view.ts';
import { createWorksheet } from './worksheets/worksheet-model.ts';

/** A running emulator. */
export interface EmulatorHandle {
  /** Origin such as `http://127.0.0.1:41234`; clients append `/v3/...`. */
  readonly url: string;
  /** The OAuth token endpoint (`${url}/oauth2/token`). */
  readonly tokenUrl: string;
  readonly port: number;
  /** The prefix of the authentication headers it expects (`HAP-` in the platform dialect). */
  readonly headerPrefix: string;
  readonly dialect: 'platform' | 'spec';
  /** Read access to apps, worksheets and rows. */
  readonly state: EmulatorStateView;
  /**
   * Requests received, oldest first (the latest `requestLogLimit`). Credential ids only,
   * never secrets.
   */
  readonly requests: readonly RequestLogEntry[];
  /** Stops the server and drops open connections. */
  close(): Promise<void>;
  /** Back to the seed: content, credentials, limits, fault sequence and request log. */
  reset(): void;
  /** Changes limits, faults and settings while running; `undefined` turns a limit off. */
  setOptions(options: RuntimeOptions): void;
  /** A new application with its app key and sign. */
  createApp(input: { name: string }): { appId: string; appKey: string; sign: string };
  /** A personal access token for the apps (acting as `user`, default the org admin). */
  createPersonalToken(appIds: readonly string[], user?: UserRef): string;
  /** An OAuth client with the refresh token of a first authorisation. */
  createOAuthClient(appIds: readonly string[], user?: UserRef): OAuthClientCredentials;
  /** Creates a worksheet as POST /v3/app/worksheets would and returns its structure. */
  createWorksheet(appId: string, input: CreateWorksheetInput): WorksheetStructure;
  /** Makes every OAuth access token issued so far expire now. */
  expireAccessTokens(): void;
}

const NULLABLE: ReadonlySet<string> = new Set(['rateLimit', 'quota', 'faults', 'ipAllowList']);

export async function startEmulator(options: EmulatorOptions = {}): Promise<EmulatorHandle> {
  const resolved: ResolvedOptions = resolveOptions(options);
  const deps: EmulatorDeps = {
    state: createEmptyState(),
    ids: createIdGenerator(() => resolved.now()),
    options: resolved,
  };
  const load = (): void => {
    if (resolved.seed !== undefined) applySeed(deps, resolved.seed);
  };
  load();

  const requests: RequestLogEntry[] = [];
  const limits = createRequestLimits({
    rateLimit: () => resolved.rateLimit,
    quota: () => resolved.quota,
    now: () => resolved.now(),
  });
  const faults = createFaultInjector(() => resolved.faults);
  let url = '';
  const listener = createRequestListener({
    ...deps,
    router: createRouter(createAllRoutes(deps)),
    limits,
    faults,
    requests,
    baseUrl: () => url,
  });
  const server = createServer(listener);
  // Longer than clients' keep-alive, so the server never closes a socket a client is reusing.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(resolved.port, resolved.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  url = `http://${resolved.host.includes(':') ? `[${resolved.host}]` : resolved.host}:${port}`;

  const appOf = (appId: string) => {
    const app = deps.state.apps.get(appId);
    if (app === undefined) throw new Error(`emulator: no application ${appId}`);
    return app;
  };

  return {
    url,
    tokenUrl: `${url}/oauth2/token`,
    port,
    headerPrefix: resolved.headerPrefix,
    dialect: resolved.dialect,
    state: createStateView(deps),
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      }),
    reset() {
      Object.assign(deps.state, createEmptyState());
      load();
      limits.clear();
      faults.reseed();
      requests.length = 0;
    },
    setOptions(changes) {
      validateOptions(changes);
      for (const [key, value] of Object.entries(changes)) {
        if (value === undefined && !NULLABLE.has(key)) continue;
        (resolved as unknown as Record<string, unknown>)[key] = value;
      }
      if ('rateLimit' in changes || 'quota' in changes) limits.clear();
      if ('faults' in changes) faults.reseed();
    },
    createApp(input) {
      const app = createApp(deps, { name: input.name }, adminUser(deps.state));
      return { appId: app.id, appKey: app.appKey, sign: app.sign };
    },
    createPersonalToken: (appIds, user) =>
      createPersonalToken(deps.state, deps.ids, appIds, user ?? adminUser(deps.state)),
    createOAuthClient: (appIds, user) =>
      createOAuthClient(deps.state, deps.ids, appIds, user ?? adminUser(deps.state)),
    createWorksheet: (appId, input) =>
      structureView(createWorksheet(deps, appOf(appId), input), resolved.typeFormat),
    expireAccessTokens: () => expireAccessTokens(deps.state, resolved.now()),
  };
}
