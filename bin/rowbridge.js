#!/usr/bin/env node
import module from 'node:module';
import process from 'node:process';
import { setFlagsFromString } from 'node:v8';

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
// Node strips the types of every .ts file it loads with a WebAssembly compiler that costs
// about 18 MB of memory and 100 ms at each start. The compile cache (in the OS temp
// folder, keyed by file content and Node version; NODE_COMPILE_CACHE moves it,
// NODE_DISABLE_COMPILE_CACHE=1 turns it off) keeps the stripped code and V8's bytecode,
// so from the second start on the compiler is never loaded. A read-only disk just means no cache.
module.enableCompileCache?.();
// V8's optimizing compilers stay off while the command starts (src/cli/process-tuning.ts
// says why and turns them back on once the command is loaded, the worker at its first job). Turned off here, in plain JavaScript, because resolving even the first of our
// modules makes Node's path functions hot enough for Maglev, whose code an idle worker
// would then keep resident (about 2 MB). The same test of the user's own flags as there.
const optimizerFlags = /--(no[-_])?(turbofan|opt|maglev|jitless|lite[-_]mode)\b/;
if (
  ![...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => optimizerFlags.test(arg)) &&
  !process.config.variables.v8_enable_lite_mode
)
  setFlagsFromString(
    process.config.variables.v8_enable_maglev ? '--no-turbofan --no-maglev' : '--no-turbofan',
  );
await import('../src/cli.ts');
