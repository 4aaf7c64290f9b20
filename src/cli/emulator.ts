import type { CliIo } from './io.ts';
import { EXIT } from './io.ts';

export function main(_args: string[], io: CliIo): Promise<number> {
  io.err('emulator: arriving with issue 3');
  return Promise.resolve(EXIT.failure);
}
