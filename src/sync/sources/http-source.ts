/**
 * HTTP source: a JSON API read page by page. A page is streamed, one item in memory at a
 * time, under connect, header and body timeouts and a response size cap (http-limits.ts);
 * the abort signal cancels a request in flight and stops between items. Paging ends at
 * an empty page, a page shorter than the page size, a missing next cursor, or `maxPages`.
 * Headers and query values may reference `${ENV}`; what they resolve to is treated as a
 * secret in every message. Unless ROWBRIDGE_SOURCE_DENY_PRIVATE is set, a job's URL may
 * point anywhere this process can reach, internal networks and loopback (the dashboard)
 * included.
 */
import type { HttpSourceSpec } from './source-spec.ts';
import type { SourceDeps } from './source-deps.ts';
import { createCursorFilter, isEmptyCursor } from './cursor-filter.ts';
import { describeJsonType, getAtPath, splitDotPath } from './dot-path.ts';
import { resolveEnvRecord, resolveEnvRefs } from './env-refs.ts';
import { Agent } from 'undici';
import { readSetting } from '../../../config/settings.ts';
import { createPrivateAddressGuard } from './private-address-guard.ts';
import { streamJsonElements, type StreamRest } from './http-json-stream.ts';
import { httpLimits } from './http-limits.ts';
import { openResponse, type OpenResponse } from './http-request.ts';
import { parseJsonObject } from './ndjson-source.ts';
import { invalidRecord, SourceError, type SourceItem } from './source-error.ts';
import { createLocalGate } from './source-rate-limit.ts';

function parseBaseUrl(url: string): URL {
  try {
    return new URL(url);
  } catch {
    throw new SourceError('SOURCE_CONFIG', 'http source: url is not a valid absolute URL');
  }
}

/** Streams the items of a paged JSON API. */
export async function* readHttpSource(spec: HttpSourceSpec, deps: SourceDeps): AsyncGenerator<SourceItem> {
  const method = spec.method ?? 'GET';
  const headers = resolveEnvRecord(spec.headers, deps.env, 'http source header', 'source.headers');
  const query = resolveEnvRecord(spec.query, deps.env, 'http source query parameter', 'source.query');
  const resolvedUrl = resolveEnvRefs(spec.url, deps.env, 'http source url (source.url)');
  const secrets = [...headers.secrets, ...query.secrets, ...resolvedUrl.secrets];
  const base = parseBaseUrl(resolvedUrl.value);
  const itemsPath = splitDotPath(spec.itemsPath);
  const pagination = spec.pagination ?? { type: 'none' };
  const keep = createCursorFilter(deps.since, deps.cursorField, deps, 'http source');
  let page = pagination.type === 'page' ? (pagination.startPage ?? 1) : 1;
  let cursor: string | undefined;
  let index = 0;
  const limits = httpLimits(spec);
  // One agent per read: it carries the connect timeout and its sockets end with the read.
  // Redirects are not followed (a 3xx fails the read), so the guard sees every target.
  const agent = new Agent({
    connect:
      readSetting('sourceDenyPrivate', deps.env) === true
        ? createPrivateAddressGuard(limits.connectTimeoutMs)
        : { timeout: limits.connectTimeoutMs },
  });
  // Without the job's shared limit (validate, preview) the spec's limit holds for this read.
  const local =
    deps.sourceGate === undefined && spec.rateLimit !== undefined
      ? createLocalGate(spec.rateLimit)
      : undefined;
  const gate = deps.sourceGate ?? local?.gate;
  try {
    yield* readPages();
  } finally {
    await agent.destroy().catch(() => undefined);
    await local?.close();
  }

  async function* readPages(): AsyncGenerator<SourceItem> {
    for (let pagesRead = 0; spec.maxPages === undefined || pagesRead < spec.maxPages; pagesRead++) {
      deps.signal?.throwIfAborted();
      const paging: Record<string, string | number> = {};
      if (pagination.type === 'page') {
        paging[pagination.pageParam ?? 'page'] = page;
        paging[pagination.sizeParam ?? 'pageSize'] = pagination.pageSize ?? 100;
      } else if (pagination.type === 'cursor' && cursor !== undefined) {
        paging[pagination.cursorParam] = cursor;
      }
      const url = new URL(base);
      for (const [key, value] of Object.entries(query.values)) url.searchParams.set(key, value);
      // POST list APIs take their paging in the body; GET ones in the query string.
      if (method === 'GET')
        for (const [key, value] of Object.entries(paging)) url.searchParams.set(key, String(value));
      const label = `page ${pagesRead + 1}`;
      const res = await openResponse({
        method,
        url,
        headers: headers.values,
        ...(method === 'POST' ? { body: paging } : {}),
        label,
        secrets,
        signal: deps.signal,
        retry: deps.httpRetry,
        dispatcher: agent,
        limits,
        gate,
      });
      let more: boolean;
      try {
        more = yield* readPage(res, pagesRead);
      } finally {
        // The request holds its slot while its body streams: `concurrent` counts open responses.
        res.release();
      }
      if (!more) return;
    }
  }

  /** Yields one page's items; says whether another page follows. */
  async function* readPage(res: OpenResponse, pagesRead: number): AsyncGenerator<SourceItem, boolean> {
    const rest: StreamRest = {};
    const elements = streamJsonElements(
      res,
      { itemsPath, keepOutside: pagination.type === 'cursor', limits, signal: deps.signal },
      rest,
    );
    let count = 0;
    for await (const element of elements) {
      count++;
      const parsed = parseJsonObject(element.text);
      if ('problem' in parsed) {
        yield invalidRecord(
          { index: index++, page: pagesRead + 1 },
          `${res.where}: item ${count}: ${parsed.problem}`,
        );
        continue;
      }
      const decision = keep(parsed.data);
      if (!decision.keep) continue;
      yield {
        data: parsed.data,
        position: { index: index++, page: pagesRead + 1 },
        ...('cursor' in decision ? { cursor: decision.cursor } : {}),
      };
    }
    const where = res.where;
    const body = rest.value;
    if (pagination.type === 'none' || count === 0) return false;
    if (pagination.type === 'page') {
      if (count < (pagination.pageSize ?? 100)) return false;
      page++;
      return true;
    }
    const next = getAtPath(body, splitDotPath(pagination.cursorPath));
    if (isEmptyCursor(next)) return false;
    if (typeof next !== 'string' && typeof next !== 'number') {
      throw new SourceError(
        'SOURCE_FORMAT',
        `${where}: cursorPath "${pagination.cursorPath}" is ${describeJsonType(next)}, expected a string or number`,
      );
    }
    // An API that hands back the cursor it was given would page forever.
    if (String(next) === cursor) {
      throw new SourceError(
        'SOURCE_FORMAT',
        `${where}: the API returned the same next cursor again; stopping instead of looping`,
      );
    }
    cursor = String(next);
    return true;
  }
}
