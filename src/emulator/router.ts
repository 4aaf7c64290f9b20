/**
 * Route table of the emulator: `{param}` segments as in spec §4, literal segments win
 * over parameters (`rows/batch` is not a row id), and a path that exists under another
 * method is told apart from one that does not exist at all.
 */
import type { HttpMethod } from './wire-types.ts';
import type { Principal } from './auth.ts';
import type { AppRecord } from './state/records.ts';

/** What a handler receives. */
export interface RouteContext {
  params: Record<string, string>;
  query: URLSearchParams;
  body: unknown;
  principal: Principal;
  /** Origin the emulator answers on (share links point at it). */
  baseUrl: string;
}

/** Handlers of `/v3/app/...` also get the application the credential resolved to. */
export interface AppRouteContext extends RouteContext {
  app: AppRecord;
}

interface RouteBase {
  method: HttpMethod;
  /** Path after `/v3`, e.g. `/app/worksheets/{worksheet_id}`. */
  path: string;
  /**
   * Whether the route changes data. Decides which requests `resetAfterApply` may hit.
   * @defaultValue true for every method but GET
   */
  write?: boolean;
}

export type Route =
  | (RouteBase & { scope: 'app'; handler: (ctx: AppRouteContext) => unknown })
  | (RouteBase & { scope: 'account'; handler: (ctx: RouteContext) => unknown });

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string>; write: boolean }
  | { kind: 'method-not-allowed'; allowed: HttpMethod[] }
  | { kind: 'not-found' };

interface CompiledRoute {
  route: Route;
  segments: string[];
  literalCount: number;
}

export interface Router {
  match(method: string, path: string): RouteMatch;
}

function matchSegments(segments: string[], parts: string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i += 1) {
    const seg = segments[i]!;
    const part = parts[i]!;
    if (seg.startsWith('{')) {
      if (part === '') return undefined;
      params[seg.slice(1, -1)] = decodeURIComponent(part);
    } else if (seg !== part) {
      return undefined;
    }
  }
  return params;
}

export function createRouter(routes: readonly Route[]): Router {
  const compiled: CompiledRoute[] = routes.map((route) => {
    const segments = route.path.split('/').slice(1);
    return { route, segments, literalCount: segments.filter((s) => !s.startsWith('{')).length };
  });
  // Most literal first, so `/rows/batch` beats `/rows/{row_id}`.
  compiled.sort((a, b) => b.literalCount - a.literalCount);

  return {
    match(method, path) {
      const parts = path.split('/').slice(1);
      const allowed: HttpMethod[] = [];
      let pathMatched = false;
      for (const c of compiled) {
        const params = matchSegments(c.segments, parts);
        if (params === undefined) continue;
        if (c.route.method === method) {
          return { kind: 'found', route: c.route, params, write: c.route.write ?? c.route.method !== 'GET' };
        }
        // A more literal route of another method shadows parameter routes of this one
        // only if nothing of this method matches; keep looking.
        pathMatched = true;
        allowed.push(c.route.method);
      }
      return pathMatched ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
    },
  };
}
