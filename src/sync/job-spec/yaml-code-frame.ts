/**
 * The lines around a YAML error with a caret under its column, as compilers print them,
 * so a person sees where the file breaks. A shown line never carries a secret: values
 * under credential-like keys, URL passwords and credential query values are masked.
 */
import { isSecretName, MASK, maskSqlText, maskUrl } from '../../ground/mask-secrets.ts';

const KEY_VALUE = /^(\s*(?:-\s+)?["']?)([^"':#{}[\],]+)(["']?\s*:\s+)(\S.*)$/;
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'}\],]+/gi;

function maskLine(line: string): string {
  const kv = KEY_VALUE.exec(line);
  if (kv !== null && isSecretName(kv[2]!.trim())) return `${kv[1]}${kv[2]}${kv[3]}${MASK}`;
  return maskSqlText(line.replace(URL_IN_TEXT, (url) => maskUrl(url)));
}

/** The frame of 1-based `line` and `column` in `text`: the line before, the line, a caret. */
export function yamlCodeFrame(text: string, line: number, column: number): string {
  const lines = text.split(/\r?\n/);
  const first = Math.max(1, line - 1);
  const last = Math.min(lines.length, line);
  const width = String(last).length;
  const out: string[] = [];
  for (let n = first; n <= last; n += 1) {
    out.push(`${n === line ? '>' : ' '} ${String(n).padStart(width)} | ${maskLine(lines[n - 1] ?? '')}`);
  }
  out.push(`  ${' '.repeat(width)} | ${' '.repeat(Math.max(0, column - 1))}^`);
  return out.join('\n');
}
