import type { CliCommand } from './io.ts';

/** Command name → lazy loader, so `rowbridge validate` does not load BullMQ. */
export const commands: Record<string, () => Promise<CliCommand>> = {
  emulator: () => import('./emulator.ts'),
};

const SUMMARY: Record<string, string> = {
  emulator: 'emulator [--port N] [--seed FILE]   start the local API v3 emulator',
};

export function usage(): string {
  const lines = Object.keys(commands).map((name) => `  ${SUMMARY[name] ?? name}`);
  return `usage: rowbridge <command> [options]\n\ncommands:\n${lines.join('\n')}\n`;
}
