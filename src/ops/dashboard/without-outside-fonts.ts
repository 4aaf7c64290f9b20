/**
 * bull-board's page links IBM Plex from fonts.googleapis.com: every view of the dashboard
 * would tell Google who looks at the queues and when, and the CSP would have to allow it.
 * The link is cut from the page as it is sent; the page then uses the system's sans-serif
 * and monospace faces its CSS names after IBM Plex, and everything it loads comes from
 * the dashboard itself.
 */
import type { RequestHandler } from 'express';

const OUTSIDE_FONTS = /<link\b[^>]*\bhref=["']?https:\/\/fonts\.(?:googleapis|gstatic)\.com[^>]*>\s*/gi;

/** Middleware in front of bull-board: strips outside font links from the HTML it sends. */
export const withoutOutsideFonts: RequestHandler = (_req, res, next) => {
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    if (typeof body === 'string' && /^\s*<!doctype html/i.test(body))
      return send(body.replace(OUTSIDE_FONTS, ''));
    return send(body);
  };
  next();
};
