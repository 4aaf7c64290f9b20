/**
 * Fields whose values point at something else: attachments (by URL), members and
 * departments (by id, or looked up by name/email), relations (looked up by the related
 * worksheet's key field). Lookups happen later, batched (resolve-references.ts); here a
 * value becomes the list of canonical lookup inputs.
 */
import { CoerceFailure, type Coercer, kindOf, PendingReference } from './coerce-result.ts';

const SEPARATORS = /[,;]/;

/** Splits a reference value: an array as given, a string on "," or ";". */
function referenceItems(raw: unknown, normalise: (s: string) => string): string[] | CoerceFailure {
  const list: unknown[] = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  const out: string[] = [];
  const seen = new Set<string>();
  for (const item of list) {
    let parts: string[];
    if (typeof item === 'string') parts = Array.isArray(raw) ? [item] : item.split(SEPARATORS);
    else if ((typeof item === 'number' && Number.isFinite(item)) || typeof item === 'bigint')
      parts = [String(item)];
    else return new CoerceFailure(`expected ids or names as text, got ${kindOf(item)}`);
    for (const part of parts) {
      const value = normalise(part.trim());
      if (value === '' || seen.has(value)) continue;
      seen.add(value);
      out.push(value);
    }
  }
  return out;
}

const asIs = (s: string): string => s;
const lowerCase = (s: string): string => s.toLowerCase();

/**
 * Ids written as they are (`lookupBy: accountId`, departments without lookupBy, relations
 * with relationKey "rowid"), or a pending lookup. Emails are compared lower-cased: mail
 * systems treat them case-insensitively and the lookup receives them that way.
 */
export function createReferenceCoercer(lookup: 'none' | 'email' | 'name'): Coercer {
  const normalise = lookup === 'email' ? lowerCase : asIs;
  return (raw) => {
    const items = referenceItems(raw, normalise);
    if (items instanceof CoerceFailure) return items;
    return lookup === 'none' ? items : new PendingReference(items);
  };
}

/**
 * Members or departments through the job's own table (source value → id): for values no
 * platform lookup can find, such as emails, which the user lookup masks
 * (platform-shapes §9 [C]). A value missing from the table rejects its row by name.
 */
export function createTableCoercer(
  table: Readonly<Record<string, string>>,
  what: 'member' | 'department',
): Coercer {
  const ids = new Map(Object.entries(table));
  const lower = new Map([...ids].map(([k, v]) => [k.toLowerCase(), v]));
  return (raw) => {
    const items = referenceItems(raw, asIs);
    if (items instanceof CoerceFailure) return items;
    const out: string[] = [];
    const missing: string[] = [];
    for (const item of items) {
      // Exact first; then case-insensitively, since tables are often keyed by email.
      const id = ids.get(item) ?? lower.get(item.toLowerCase());
      if (id === undefined) missing.push(item);
      else if (!out.includes(id)) out.push(id);
    }
    if (missing.length > 0) {
      return new CoerceFailure(
        `no ${what} for ${missing.map((m) => `"${m}"`).join(', ')} in the mapping's lookupTable (add an entry: value → ${what === 'member' ? 'accountId' : 'department id'})`,
      );
    }
    return out;
  };
}

/**
 * A single member or relation field (Collaborator subType 0, Relation subType 1) takes
 * one id: a source value naming several fails its row with the reason, rather than being
 * cut to the first (a silent loss) or refused by the platform for the whole batch.
 */
export function createSingleCoercer(coerce: Coercer, what: string): Coercer {
  return (raw) => {
    const out = coerce(raw);
    const items: readonly unknown[] | undefined =
      out instanceof PendingReference ? out.values : Array.isArray(out) ? out : undefined;
    if (items === undefined || items.length <= 1) return out;
    return new CoerceFailure(
      `the field holds one ${what}, got ${items.length}: ${items.map((v) => `"${String(v)}"`).join(', ')}`,
    );
  };
}

interface Attachment {
  name: string;
  url: string;
}

function attachmentOf(url: string, name: string | undefined): Attachment | CoerceFailure {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return new CoerceFailure(`not a URL: expected an http(s) address like https://host/file.pdf`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    return new CoerceFailure(
      `unsupported URL scheme ${parsed.protocol} : attachments are fetched over http or https`,
    );
  }
  if (name !== undefined && name.trim() !== '') return { name: name.trim(), url };
  const segment = parsed.pathname
    .split('/')
    .filter((s) => s !== '')
    .pop();
  let fileName = parsed.hostname;
  if (segment !== undefined) {
    try {
      fileName = decodeURIComponent(segment);
    } catch {
      fileName = segment;
    }
  }
  return { name: fileName, url };
}

/** Attachments: `[{name, url}]` from a URL, an array of URLs, or `{url, name?}` objects. */
export function createAttachmentCoercer(): Coercer {
  return (raw) => {
    const list: unknown[] = Array.isArray(raw) ? (raw as unknown[]) : [raw];
    const out: Attachment[] = [];
    for (const item of list) {
      let result: Attachment | CoerceFailure;
      if (typeof item === 'string') {
        if (item.trim() === '') continue;
        result = attachmentOf(item.trim(), undefined);
      } else if (
        typeof item === 'object' &&
        item !== null &&
        typeof (item as { url?: unknown }).url === 'string'
      ) {
        const { url, name } = item as { url: string; name?: unknown };
        result = attachmentOf(url.trim(), typeof name === 'string' ? name : undefined);
      } else {
        result = new CoerceFailure(`expected a URL or {url, name}, got ${kindOf(item)}`);
      }
      if (result instanceof CoerceFailure) return result;
      out.push(result);
    }
    return out;
  };
}
