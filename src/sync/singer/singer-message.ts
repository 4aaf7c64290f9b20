/**
 * The Singer protocol as a tap writes it: one JSON message per line, SCHEMA, RECORD or
 * STATE (ACTIVATE_VERSION too, which rowbridge has no use for). A line that is none of
 * them is a broken tap or a pipe mixed with other output: it stops the read, naming the
 * line and what is allowed, before anything after it is written.
 */
import { ConfigError } from '../../ground/errors.ts';

/** A SCHEMA: the JSON Schema of a stream's records, and its key properties. */
export interface SingerSchema {
  type: 'SCHEMA';
  stream: string;
  /** The property names the schema declares (`schema.properties`). */
  properties: string[];
  keyProperties: string[];
}

/** A RECORD of a stream. */
export interface SingerRecord {
  type: 'RECORD';
  stream: string;
  record: Record<string, unknown>;
}

/** A STATE: the tap's bookmark, printed back by a target once the records before it are safe. */
export interface SingerState {
  type: 'STATE';
  value: unknown;
}

/** What one line of a tap's output says; `skip` for messages a target may ignore. */
export type SingerMessage = SingerSchema | SingerRecord | SingerState | { type: 'skip' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses one line of a tap's output; throws a ConfigError naming `where` (`stdin line 12`). */
export function parseSingerMessage(text: string, where: string): SingerMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`${where}: not a Singer message: not valid JSON (${(err as Error).message})`);
  }
  const fail = (why: string): never => {
    throw new ConfigError(`${where}: ${why}`);
  };
  if (!isObject(value)) return fail('not a Singer message: expected a JSON object with a "type"');
  const type = value.type;
  const stream = typeof value.stream === 'string' && value.stream !== '' ? value.stream : undefined;
  switch (type) {
    case 'SCHEMA': {
      if (stream === undefined) return fail('SCHEMA without a "stream" name');
      const schema = value.schema;
      if (!isObject(schema) || !isObject(schema.properties))
        return fail(`SCHEMA of stream ${stream}: "schema" must be a JSON Schema object with "properties"`);
      const keys = value.key_properties;
      if (keys !== undefined && !(Array.isArray(keys) && keys.every((k) => typeof k === 'string')))
        return fail(`SCHEMA of stream ${stream}: "key_properties" must be a list of property names`);
      return {
        type: 'SCHEMA',
        stream,
        properties: Object.keys(schema.properties),
        keyProperties: keys ?? [],
      };
    }
    case 'RECORD':
      if (stream === undefined) return fail('RECORD without a "stream" name');
      if (!isObject(value.record)) return fail(`RECORD of stream ${stream}: "record" must be a JSON object`);
      return { type: 'RECORD', stream, record: value.record };
    case 'STATE':
      if (!('value' in value)) return fail('STATE without a "value"');
      return { type: 'STATE', value: value.value };
    case 'ACTIVATE_VERSION':
      return { type: 'skip' };
    default:
      return fail(
        `not a Singer message: "type" is ${JSON.stringify(type) ?? 'missing'}; allowed: SCHEMA, RECORD, STATE, ACTIVATE_VERSION`,
      );
  }
}
