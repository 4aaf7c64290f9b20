/**
 * Request and response helpers the dashboard's routes share: query parameters read
 * strictly (a bad one is the caller's mistake, answered 400 with what is allowed), and
 * pages sent uncached (they show live state and personal data).
 */
import type { Request, Response } from 'express';
import { ERROR_CATEGORIES, RowbridgeError } from '../../ground/errors.ts';
import type { ErrorCategory } from '../../ground/errors.ts';
import { html, layout, toHtmlString } from './html.ts';
import type { SafeHtml } from './html.ts';

/** A bad query parameter: answered 400 with the message. */
export class BadRequest extends RowbridgeError {
  override name = 'BadRequest';
  override readonly code: string = 'ROWBRIDGE_BAD_REQUEST';
  // What the caller asked for is wrong: asked again the same, it fails again.
  override readonly category: ErrorCategory = 'config';
}

/** One query parameter as a string; repeated parameters are refused rather than guessed. */
export function param(req: Request, name: string): string | undefined {
  const value: unknown = (req.query as Record<string, unknown>)[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new BadRequest(`query parameter "${name}" must be given once`);
  return value;
}

/** The `category` parameter, one of the error taxonomy's categories. */
export function categoryParam(req: Request): ErrorCategory | undefined {
  const value = param(req, 'category');
  if (value === undefined) return undefined;
  if (!(ERROR_CATEGORIES as readonly string[]).includes(value)) {
    throw new BadRequest(
      `unknown dead-letter category "${value}"; categories: ${ERROR_CATEGORIES.join(', ')}`,
    );
  }
  return value as ErrorCategory;
}

/** Sends a page, never cached. */
export function send(res: Response, status: number, page: SafeHtml): void {
  res.status(status).type('html').set('cache-control', 'no-store').send(toHtmlString(page));
}

/** Sends a page that says what went wrong. */
export function problem(res: Response, status: number, title: string, message: string): void {
  send(
    res,
    status,
    layout(
      title,
      html`<h1>${title}</h1>
        <p class="reason">${message}</p>
        <p><a href="/runs">Back to the runs</a></p>`,
    ),
  );
}
