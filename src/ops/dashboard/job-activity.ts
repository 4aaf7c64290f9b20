/**
 * What happened around a job's runs, for its page: the last webhook calls (issue 26, kept
 * by queue/hook-inbox.ts), a change stream's lag (issue 26 §2, saved by its consumer) and
 * the last notifications its channels did not take (issue 27,
 * kept by queue/notify-worker.ts). A channel is shown by its name (`job:1`, its type),
 * never by its URL, which for every chat platform is its credential; the error texts
 * were masked when kept, and are masked again here in case an older entry was not.
 */
import { withoutUrls } from '../../ground/mask-secrets.ts';
import type { HookCall } from '../../queue/hook-inbox.ts';
import type { NotifyFailure } from '../../queue/notify-delivery.ts';
import { formatBytes } from '../../sync/cdc/cdc-lag.ts';
import type { CdcLag } from '../../sync/cdc/cdc-lag.ts';
import { hookTriggerOf } from '../../sync/job-spec/hook-trigger.ts';
import type { JobSpec } from '../../sync/job-spec/job-spec-schema.ts';
import { badge, html, localTime } from './html.ts';
import type { SafeHtml } from './html.ts';

function outcome(call: HookCall): SafeHtml {
  if (call.status === 202) return html`<span class="badge completed">queued ${call.queued}</span>`;
  if (call.status === 200) return html`<span class="badge skipped">duplicate</span>`;
  return html`<span class="badge failed">refused ${call.status}</span>`;
}

/** The last webhook calls, when the job takes webhooks or has had calls. */
export function hooksSection(spec: JobSpec | undefined, calls: readonly HookCall[]): SafeHtml {
  const takesHooks = spec !== undefined && hookTriggerOf(spec) !== undefined;
  if (!takesHooks && calls.length === 0) return html``;
  return html`<h2>Webhook calls</h2>
    ${
      calls.length === 0
        ? html`<p class="muted">No calls yet.</p>`
        : html`<div class="wide-table">
            <table class="hooks">
              <thead>
                <tr>
                  <th>Received</th>
                  <th>Delivery id</th>
                  <th>Outcome</th>
                  <th>Reason</th>
                </tr>
              </thead>
              <tbody>
                ${calls.map(
                  (call) =>
                    html`<tr>
                      <td>${localTime(call.at)}</td>
                      <td><code>${call.deliveryId}</code></td>
                      <td>${outcome(call)}</td>
                      <td class="reason">${call.status >= 400 ? call.reason : ''}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }`;
}

/** The last failed notification deliveries (a failure never fails a run: it shows here). */
export function notifyFailuresSection(failures: readonly NotifyFailure[]): SafeHtml {
  return html`<h2>Notifications not delivered</h2>
    ${
      failures.length === 0
        ? html`<p class="muted">None kept: every notification was delivered, or none was sent.</p>`
        : html`<div class="wide-table">
            <table class="notify-failures">
              <thead>
                <tr>
                  <th>At</th>
                  <th>Channel</th>
                  <th>Event</th>
                  <th>Status or error</th>
                </tr>
              </thead>
              <tbody>
                ${failures.map(
                  (f) =>
                    html`<tr>
                      <td>${localTime(f.at)}</td>
                      <td><code>${f.channel}</code> ${f.channelType}</td>
                      <td>${f.event}</td>
                      <td class="reason">${withoutUrls(f.message)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
          </div>`
    }`;
}

/** A postgres-cdc job's stream: its state, its lag in bytes and seconds, and any warning. */
export function cdcLagSection(spec: JobSpec | undefined, lag: CdcLag | undefined): SafeHtml {
  if (spec?.source.type !== 'postgres-cdc' && lag === undefined) return html``;
  if (lag === undefined)
    return html`<h2>Change capture</h2>
      <p class="muted">
        No consumer has reported within the hour: no worker (<code>rowbridge worker</code>) streams this job.
      </p>`;
  return html`<h2>Change capture</h2>
    <dl class="cdc-lag">
      <dt>Stream</dt>
      <dd>${badge(lag.state)} ${lag.holder === undefined ? '' : html`by <code>${lag.holder}</code>`}</dd>
      <dt>Lag</dt>
      <dd class="lag">
        ${lag.bytes === undefined ? '-' : formatBytes(lag.bytes)} of WAL behind, ${lag.seconds} s behind
      </dd>
      <dt>Reported</dt>
      <dd>${localTime(lag.reportedAt)}</dd>
    </dl>
    ${lag.warnings.map(
      (warning) =>
        html`<p class="reason cdc-warning"><span class="badge failed">warning</span> ${warning}</p>`,
    )}`;
}
