import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The spec file of the job `name` in `folder`: NAME.yaml, or NAME.yml when only that one
 * exists (the runtime's lookup order). A missing job answers the .yaml path, which the
 * caller's read then names.
 */
export function jobFileIn(folder: string, name: string): string {
  const yaml = path.join(folder, `${name}.yaml`);
  const yml = path.join(folder, `${name}.yml`);
  return !existsSync(yaml) && existsSync(yml) ? yml : yaml;
}
