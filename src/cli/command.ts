/**
 * The skeleton every command shares: its options declared once, with a line of help
 * each; `--help` answered from them (exit 0); a misuse printed with the usage (exit 64).
 */
import { parseCliArgs, UsageError } from './args.ts';
import { cmd, EXIT } from './io.ts';
import type { CliIo } from './io.ts';

/** One option of a command. */
export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  /** The value's placeholder in the help, e.g. `N` for `--limit N`. @defaultValue `X` */
  value?: string;
  /** What it does, in a few words. */
  help: string;
}

/** A command's declaration: what `--help` prints and what the parser accepts. */
export interface CommandSpec<O extends Record<string, OptionSpec> = Record<string, OptionSpec>> {
  /** As typed after `rowbridge`: `run`, `dlq list`. */
  name: string;
  /** Synopsis lines after `rowbridge `, e.g. `run JOB [--json]`. @defaultValue `<name> [options]` */
  usage?: readonly string[];
  /** What the command does and what its exit codes mean. */
  description: string;
  options: O;
  /** How many positional arguments, and what to call one in messages. @defaultValue none */
  positionals?: { min?: number; max?: number; label: string };
}

type OptionValue<S extends OptionSpec> = S['type'] extends 'boolean' ? boolean : string;

/** What the parser gives back: typed option values and the positionals. */
export interface ParsedCommand<O extends Record<string, OptionSpec>> {
  values: { [K in keyof O]?: OptionValue<O[K]> };
  positionals: string[];
}

/** Declares a command (an identity function: it keeps the option types for {@link parseCommand}). */
export function defineCommand<const O extends Record<string, OptionSpec>>(
  spec: CommandSpec<O>,
): CommandSpec<O> {
  return spec;
}

function synopsis(spec: CommandSpec): string {
  const lines = spec.usage ?? [`${spec.name} [options]`];
  return lines.map((line, i) => `${i === 0 ? 'usage: ' : '       '}rowbridge ${line}`).join('\n');
}

/** The text of `rowbridge <command> --help`. */
export function helpText(spec: CommandSpec): string {
  const rows = Object.entries(spec.options).map(([name, o]) => {
    const flag = `${o.short === undefined ? '' : `-${o.short}, `}--${name}${o.type === 'string' ? ` ${o.value ?? 'X'}` : ''}`;
    return [flag, o.help] as const;
  });
  rows.push(['-h, --help', 'this help']);
  const width = Math.max(...rows.map(([flag]) => flag.length)) + 2;
  const options = rows.map(
    ([flag, help]) => `  ${flag.padEnd(width)}${help.replace(/\n/g, `\n  ${' '.repeat(width)}`)}`,
  );
  return `${synopsis(spec)}\n\n${spec.description}\n\noptions:\n${options.join('\n')}\n`;
}

/** Prints a misuse with the command's synopsis and returns 64. */
export function usageFailure(spec: CommandSpec, err: unknown, io: CliIo): number {
  const message = err instanceof Error ? err.message : String(err);
  io.err(
    `rowbridge ${spec.name}: ${message}\n${synopsis(spec)}\n(${cmd(io)} ${spec.name} --help lists the options)`,
  );
  return EXIT.usage;
}

function checkCount(spec: CommandSpec, positionals: readonly string[]): void {
  const { min = 0, max = 0, label } = spec.positionals ?? { label: 'argument' };
  const n = positionals.length;
  if (n < min) throw new UsageError(min === 1 ? `which ${label}?` : `needs at least ${min} ${label}s`);
  if (n > max) {
    if (max === 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
    throw new UsageError(
      `takes ${max === 1 ? `one ${label}` : `at most ${max} ${label}s`}, got ${n}: ${positionals.join(' ')}`,
    );
  }
}

/**
 * Parses a command's arguments. Resolves to the parsed values, or to the exit code when
 * there is nothing more to do: 0 after printing the help, 64 after printing a misuse.
 */
export function parseCommand<O extends Record<string, OptionSpec>>(
  spec: CommandSpec<O>,
  args: string[],
  io: CliIo,
): ParsedCommand<O> | number {
  if (args.includes('--help') || args.includes('-h')) {
    io.out(helpText(spec));
    return EXIT.ok;
  }
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, o] of Object.entries(spec.options))
    options[name] = { type: o.type, ...(o.short === undefined ? {} : { short: o.short }) };
  try {
    const parsed = parseCliArgs(args, options, (spec.positionals?.max ?? 0) > 0);
    checkCount(spec, parsed.positionals);
    return { values: parsed.values as ParsedCommand<O>['values'], positionals: parsed.positionals };
  } catch (err) {
    return usageFailure(spec, err, io);
  }
}
