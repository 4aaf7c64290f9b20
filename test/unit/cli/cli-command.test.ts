import { describe, expect, it } from 'vitest';
import { positiveInt } from '../../../src/cli/args.ts';
import { defineCommand, helpText, parseCommand } from '../../../src/cli/command.ts';
import { redisAddress } from '../../../src/ground/redis-address.ts';
import { captureIo } from '../../helpers/capture-io.ts';

const SAMPLE = defineCommand({
  name: 'sample',
  usage: ['sample JOB [--limit N] [--json]'],
  description: 'Does a sample thing.\nExit 0, 64 misuse.',
  options: {
    limit: { type: 'string', value: 'N', help: 'at most N' },
    json: { type: 'boolean', help: 'print JSON' },
  },
  positionals: { min: 1, max: 1, label: 'job' },
});

describe('the command skeleton', () => {
  it('answers --help (anywhere in the arguments) with the synopsis, description and every option', () => {
    const io = captureIo({});
    expect(parseCommand(SAMPLE, ['orders', '--help'], io)).toBe(0);
    expect(io.stdout.join('')).toBe(helpText(SAMPLE));
    expect(helpText(SAMPLE)).toBe(
      'usage: rowbridge sample JOB [--limit N] [--json]\n\n' +
        'Does a sample thing.\nExit 0, 64 misuse.\n\n' +
        'options:\n' +
        '  --limit N   at most N\n' +
        '  --json      print JSON\n' +
        '  -h, --help  this help\n',
    );
  });

  it('gives back typed values and the positionals', () => {
    const parsed = parseCommand(SAMPLE, ['orders', '--limit', '5', '--json'], captureIo({}));
    expect(parsed).toEqual({ values: { limit: '5', json: true }, positionals: ['orders'] });
  });

  it.each([
    [['orders', '--lmit', '5'], 'unknown option --lmit (options: --limit, --json)'],
    [['orders', '--limit'], '--limit needs a value'],
    [['orders', '--limit', '--json'], '--limit needs a value'],
    [[], 'which job?'],
    [['a', 'b'], 'takes one job, got 2: a b'],
  ])('%j is a misuse: exit 64, the reason, the synopsis', (args, reason) => {
    const io = captureIo({});
    expect(parseCommand(SAMPLE, args, io)).toBe(64);
    expect(io.stdout).toEqual([]);
    expect(io.stderr.join('\n')).toBe(
      `rowbridge sample: ${reason}\nusage: rowbridge sample JOB [--limit N] [--json]\n(rowbridge sample --help lists the options)`,
    );
  });

  it('refuses positionals when a command takes none', () => {
    const none = defineCommand({ name: 'none', description: 'x', options: {} });
    const io = captureIo({});
    expect(parseCommand(none, ['extra'], io)).toBe(64);
    expect(io.stderr.join('')).toContain('rowbridge none: unexpected argument "extra"');
  });

  it.each([
    ['0', 'got "0"'],
    ['2x', 'got "2x"'],
    ['1.5', 'got "1.5"'],
  ])('positiveInt refuses %s naming the option', (value, got) => {
    expect(() => positiveInt(value, 'limit')).toThrow(`--limit must be a whole number of at least 1, ${got}`);
  });
});

describe('redisAddress: where REDIS_URL points, never its password', () => {
  it.each([
    ['redis://127.0.0.1:6380', '127.0.0.1:6380'],
    ['redis://sync:s3cret@redis.internal/2', 'redis.internal:6379'],
    ['rediss://:pw@[::1]:7000', '[::1]:7000'],
    ['redis+cluster://u:p@a:7000,b:7001,c', 'a:7000,b:7001,c:6379'],
    ['rediss+cluster://h1:7000/0', 'h1:7000'],
    ['not a url', 'the address in REDIS_URL'],
    ['redis://', 'the address in REDIS_URL'],
  ])('%s -> %s', (url, address) => {
    expect(redisAddress(url)).toBe(address);
  });
});
