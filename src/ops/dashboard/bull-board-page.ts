/**
 * bull-board's page as the dashboard serves it: with a bar that leads back to
 * rowbridge's own pages, since bull-board's "misc links" hide behind an unlabelled icon
 * and an operator who followed a link into the queues should not need the Back button.
 */
import type { RequestHandler, Response } from 'express';

/** The links of the way back, in the order of the dashboard's own header. */
const LINKS: ReadonlyArray<[string, string]> = [
  ['/jobs', 'Jobs'],
  ['/runs', 'Runs'],
  ['/dead-letters', 'Dead letters'],
];

// Inline style attributes only: the CSP allows them (bull-board needs them) and no script.
const BAR = `<nav aria-label="rowbridge" class="rowbridge-back" style="position:fixed;left:0;right:0;bottom:0;z-index:1000;display:flex;gap:18px;align-items:center;padding:6px 16px;background:#1d2430;font:13px/1.4 system-ui,sans-serif;color:#fff">
<strong>rowbridge</strong>${LINKS.map(([path, text]) => `<a href="${path}" style="color:#cfe0ff;text-decoration:none">${text}</a>`).join('')}
</nav>`;

/** bull-board's HTML with the way back. */
export function withWayBack(page: string): string {
  return page.replace(/<body([^>]*)>/, (body) => `${body}\n${BAR}`);
}

/**
 * Put in front of bull-board's router: the page it renders (its only HTML answer; the
 * API answers JSON and the assets are files) is sent through {@link withWayBack}.
 */
export const bullBoardWayBack: RequestHandler = (_req, res, next) => {
  const render = res.render.bind(res) as (
    view: string,
    locals: object,
    done: (err: Error | null | undefined, page: string) => void,
  ) => void;
  const patched = (view: string, locals?: object) => {
    render(view, locals ?? {}, (err, page) => {
      if (err) {
        next(err);
        return;
      }
      res.type('html').send(withWayBack(page));
    });
  };
  (res as Response & { render: typeof patched }).render = patched;
  next();
};
