/**
 * Streams the elements of the items array of one http response through the JSON array
 * scanner: memory holds one element (plus, for cursor paging, the text beside the array),
 * never the body. Bytes are counted as they arrive and the connection is dropped the
 * moment the body passes `maxResponseBytes`.
 */
import type { HttpLimits } from './http-limits.ts';
import {
  discardBody,
  explainNetworkCode,
  networkErrorCode,
  tooLarge,
  type OpenResponse,
} from './http-request.ts';
import { createJsonArrayScanner, type ScannedElement } from './json-array-scanner.ts';
import { JsonScanError } from './json-scan-error.ts';
import { SourceError } from './source-error.ts';

export interface StreamOptions {
  /** Object keys from the root to the items array ([] = the root). */
  itemsPath: readonly string[];
  /** Keep the text beside the array (read into `rest` at the end) for a next cursor. */
  keepOutside: boolean;
  limits: HttpLimits;
  signal?: AbortSignal | undefined;
}

/** Filled when the stream ends: the document with its items array emptied, parsed. */
export interface StreamRest {
  value?: unknown;
}

function scanError(res: OpenResponse, err: JsonScanError, elements: number): SourceError {
  // A proxy's HTML error page with status 200 is the common case: say that, not "unexpected <".
  if (elements === 0 && !/json/i.test(res.contentType))
    return new SourceError('SOURCE_FORMAT', `${res.where}: the response is not JSON (${res.contentType})`, {
      cause: err,
    });
  const text = err.message.replaceAll('the document', 'the response').replaceAll('the file', 'the response');
  const line = err.line > 1 ? ` (line ${err.line} of the response)` : '';
  return new SourceError('SOURCE_FORMAT', `${res.where}: ${text}${line}`, { cause: err });
}

function bodyError(res: OpenResponse, err: unknown, bytes: number, limits: HttpLimits): unknown {
  if (err instanceof SourceError) return err;
  const code = networkErrorCode(err);
  if (code === undefined) return err;
  return new SourceError(
    'SOURCE_UNAVAILABLE',
    `http source: ${res.where} broke off after ${bytes} bytes of the response: ${explainNetworkCode(code, limits)}`,
  );
}

/** Yields the raw elements of the items array; fills `rest` once the body is read. */
export async function* streamJsonElements(
  res: OpenResponse,
  options: StreamOptions,
  rest: StreamRest,
): AsyncGenerator<ScannedElement> {
  const scanner = createJsonArrayScanner(options.itemsPath, { keepOutside: options.keepOutside });
  const decoder = new TextDecoder('utf-8');
  const { maxResponseBytes } = options.limits;
  let bytes = 0;
  let elements = 0;
  try {
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      bytes += chunk.byteLength;
      if (bytes > maxResponseBytes) throw tooLarge(res.where, options.limits, 'body');
      const text = decoder.decode(chunk, { stream: true });
      for (const element of scanner.push(bytes === chunk.byteLength ? text.replace(/^\uFEFF/, '') : text)) {
        elements++;
        yield element;
        options.signal?.throwIfAborted();
      }
      // The array is closed: the rest of the body is not needed (nor downloaded).
      if (scanner.done && !options.keepOutside) return;
    }
    for (const element of scanner.push(decoder.decode())) {
      elements++;
      yield element;
    }
    scanner.end();
    if (options.keepOutside) rest.value = JSON.parse(scanner.outside()) as unknown;
  } catch (err) {
    if (err instanceof JsonScanError) throw scanError(res, err, elements);
    if (err instanceof SyntaxError)
      throw new SourceError('SOURCE_FORMAT', `${res.where}: the response is not valid JSON`);
    // An abort reports itself (the run hands its job back), not a broken-off body.
    options.signal?.throwIfAborted();
    throw bodyError(res, err, bytes, options.limits);
  } finally {
    // Dropping the socket is what stops an oversized or unwanted body from arriving.
    discardBody(res.body);
  }
}
