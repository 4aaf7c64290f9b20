import { randomBytes, randomUUID } from 'node:crypto';

/** Makes ids in the platform's formats (platform notes §2). */
export interface IdGenerator {
  /** 24-hex object id (worksheets, fields, views, apps and most resources). */
  objectId(): string;
  /** UUID (rows, option keys). */
  uuid(): string;
  /** An opaque random secret of `bytes` random bytes, hex-encoded (app signs, tokens). */
  secret(bytes?: number): string;
}

/**
 * Object ids follow the MongoDB layout the platform uses: 4 bytes of seconds, 5 random
 * bytes fixed per generator, a 3-byte counter, so ids made in one second still sort by
 * creation.
 */
export function createIdGenerator(now: () => number = Date.now): IdGenerator {
  const machine = randomBytes(5).toString('hex');
  let counter = randomBytes(3).readUIntBE(0, 3);
  return {
    objectId() {
      counter = (counter + 1) % 0x1000000;
      const seconds = Math.floor(now() / 1000) % 0x100000000;
      return seconds.toString(16).padStart(8, '0') + machine + counter.toString(16).padStart(6, '0');
    },
    uuid: () => randomUUID(),
    secret: (bytes = 16) => randomBytes(bytes).toString('hex'),
  };
}
