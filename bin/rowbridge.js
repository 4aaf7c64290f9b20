#!/usr/bin/env node
import process from 'node:process';

// The rowbridge command. Plain JavaScript on purpose: rowbridge's sources are TypeScript
// that Node runs directly from 22.18 on, and an older Node would stop at the first
// import with ERR_UNKNOWN_FILE_EXTENSION, a message that names nothing the user can do.
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(
    `rowbridge needs Node.js 22.18 or newer (Node 24 LTS recommended); this is Node ${process.versions.node}.\n` +
      'Install Node 24 with your version manager (for example `nvm install 24`) or your system packages,\n' +
      'or locally for this checkout: `npm install --prefix .tools/node node@24` and run\n' +
      '`.tools/node/node_modules/node/bin/node bin/rowbridge.js ...` (what `bash .ci/run` does).\n',
  );
  process.exit(1);
}
await import('../src/cli.ts');
