import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`), never a downloaded browser. */
const CHROMIUM = process.env.ROWBRIDGE_TEST_CHROMIUM ?? '/usr/bin/chromium';

/**
 * The headless chromium every browser test drives, quiet: no GPU, no first-run pages, no
 * background traffic of its own. `extraArgs` adds a test's own switches (a host map).
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      ...extraArgs,
    ],
  });
}
