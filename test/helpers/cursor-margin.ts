/**
 * A short change-cursor margin for tests that run a job again and again and expect the
 * later runs to read nothing whole: the default 5 s margin would cost a 6 s wait between
 * runs. The emulator and the databases share this machine's clock, so 1 s is plenty, and a
 * wait of 3.5 s is still past it by more than the whole seconds the caps are rounded to
 * (the platform's Date, then the cap itself).
 */
export const SHORT_MARGIN = { ROWBRIDGE_CURSOR_MARGIN_SECONDS: '1' };

/** Long enough after a run for the next run's cursor to be past that run's writes. */
export const PAST_MARGIN_MS = 3_500;
