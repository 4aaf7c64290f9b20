import type { AnswerRef } from '../answers/answer-shape-error.ts';
import type { ApiOperation } from '../create-api-client.ts';
import { JsonBody } from '../json-body.ts';
import type { HttpMethod } from '../types.ts';

/** Per-call settings every resource method accepts as its last argument. */
export interface RequestOptions {
  /** Aborts the call: no (further) request is sent and the promise rejects. */
  signal?: AbortSignal;
}

/** A JSON object whose shape the spec does not show (spec §4: "payloads not shown"). */
export type JsonObject = Record<string, unknown>;

/** Query parameters; `undefined` values are left out of the URL. */
export type QueryParams = Record<string, string | number | boolean | undefined>;

/** What an endpoint sends besides its method and path. */
export interface OperationParts {
  query?: QueryParams | undefined;
  body?: unknown;
}

const BODY_METHODS: ReadonlySet<HttpMethod> = new Set(['POST', 'PUT', 'PATCH']);

/**
 * One {@link ApiOperation} for a resource method. POST, PUT and PATCH always carry a
 * JSON body (`{}` when the caller has nothing to send): the published examples send
 * `-d '{}'` even to parameterless POSTs, and a JSON request without a body is refused
 * by some gateways. GET and DELETE carry a body only when the endpoint defines one
 * (row deletes do, platform notes §2).
 */
export function buildOperation(
  method: HttpMethod,
  path: string,
  write: boolean,
  parts: OperationParts = {},
  options: RequestOptions = {},
): ApiOperation {
  const op: ApiOperation = { method, path, write };
  const query = compactQuery(parts.query);
  if (query !== undefined) op.query = query;
  const body = parts.body ?? (BODY_METHODS.has(method) ? {} : undefined);
  // Written to bytes now: the caller's objects are not held while the request waits.
  if (body !== undefined) op.body = new JsonBody(body);
  if (options.signal !== undefined) op.signal = options.signal;
  return op;
}

function compactQuery(query: QueryParams | undefined): QueryParams | undefined {
  if (query === undefined) return undefined;
  const entries = Object.entries(query).filter(([, value]) => value !== undefined);
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

/** The {@link AnswerRef} of an operation, for the parsers' error messages. */
export function answerRef(operation: string, op: ApiOperation): AnswerRef {
  return { operation, method: op.method, path: op.path };
}
