/**
 * How the emulator names a field in its error messages (alias if set, else name, and its
 * type), kept in one place so a write error and a filter error name a field alike.
 */
import type { FieldRecord } from '../state/records.ts';

export function fieldLabel(field: FieldRecord): string {
  return `field "${field.alias !== '' ? field.alias : field.name}" (${field.type})`;
}
