/**
 * Keeps credentials written into a job spec out of the run snapshot in Redis. The
 * job-spec schema refuses literal credentials in credential-named headers and query maps
 * and user:password in URLs, but a URL's own query string (`?api_key=...`) gets through;
 * the snapshot then stores those values masked (ground/mask-secrets.ts, as the dashboard
 * shows them), and every later preparation of the run takes them back from the job file,
 * only where the file still holds the same URL but for its credentials.
 */
import { parse, stringify } from 'yaml';
import { maskUrl } from '../../ground/mask-secrets.ts';
import { JobSpecError } from '../job-spec/job-spec-error.ts';

/** Where a masked value sits in the spec: keys and list indexes. */
export type SpecPath = Array<string | number>;

/** The snapshot's spec text with credentials masked, and where they were. */
export interface MaskedSpecText {
  text: string;
  masked: SpecPath[];
}

function visit(value: unknown, path: SpecPath, onString: (value: string, path: SpecPath) => string): unknown {
  if (typeof value === 'string') return onString(value, path);
  if (Array.isArray(value)) return value.map((item, i) => visit(item, [...path, i], onString));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, visit(v, [...path, k], onString)]));
  }
  return value;
}

function at(value: unknown, path: SpecPath): unknown {
  let node = value;
  for (const step of path) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string | number, unknown>)[step];
  }
  return node;
}

/**
 * The spec text to store: the text as written when it holds no credential in a URL,
 * else the spec re-written with them masked (undefined `masked` means nothing was).
 */
export function maskSpecText(text: string): MaskedSpecText {
  const masked: SpecPath[] = [];
  const data = visit(parse(text, { merge: true, maxAliasCount: 100 }) as unknown, [], (value, path) => {
    const shown = maskUrl(value);
    if (shown !== value) masked.push(path);
    return shown;
  });
  return masked.length === 0 ? { text, masked } : { text: stringify(data, { lineWidth: 0 }), masked };
}

/**
 * The stored text with its masked values taken back from the job file's current text.
 * A value the file no longer holds (the URL itself was edited, or the file is gone) fails
 * the preparation with a message naming the field: the run cannot read without it.
 */
export function restoreSpecText(
  stored: MaskedSpecText,
  current: { file: string; text: string } | undefined,
  file: string,
): string {
  const fileData: unknown = current === undefined ? undefined : parse(current.text, { merge: true });
  const data = visit(parse(stored.text) as unknown, [], (value, path) => {
    if (!stored.masked.some((p) => p.length === path.length && p.every((step, i) => step === path[i])))
      return value;
    const written = at(fileData, path);
    if (typeof written === 'string' && maskUrl(written) === value) return written;
    throw new JobSpecError(file, [
      {
        file,
        path: path.join('.'),
        message:
          'changed since this run started: the run keeps its spec in Redis with credentials masked and takes them back from the job file, ' +
          'which no longer holds this URL. Start the run anew (rowbridge run JOB --fresh), or better, put the credential in an environment variable (${ENV_NAME})',
      },
    ]);
  });
  return stringify(data, { lineWidth: 0 });
}
