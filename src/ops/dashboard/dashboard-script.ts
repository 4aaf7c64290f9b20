/**
 * The dashboard's one script, served from `/assets/dashboard.js` (same origin, so the
 * CSP's `script-src 'self'` allows it and no inline script is ever needed). It does two
 * things a server cannot: show times in the viewer's own zone, and send the job
 * actions as JSON POSTs with the CSRF header, which a plain HTML form cannot (the
 * access guard refuses form bodies, so that no other site's form can post here).
 * Pages work without it: times then read in UTC, and the buttons do nothing.
 */

/** Where the script is served. */
export const DASHBOARD_SCRIPT_PATH = '/assets/dashboard.js';

export const DASHBOARD_SCRIPT = `'use strict';
(function () {
  var format = new Intl.DateTimeFormat('en-US', {
    year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short'
  });
  // YYYY-MM-DD HH:mm and the zone, like the UTC times the server writes.
  function show(at) {
    var p = {};
    format.formatToParts(at).forEach(function (part) { p[part.type] = part.value; });
    return p.year + '-' + p.month + '-' + p.day + ' ' + p.hour + ':' + p.minute + ' ' + p.timeZoneName;
  }
  function localise() {
    document.querySelectorAll('time[data-local]').forEach(function (el) {
      var at = new Date(el.getAttribute('datetime'));
      if (isNaN(at.getTime())) return;
      el.title = el.textContent;
      el.textContent = show(at);
      el.dataset.zone = format.resolvedOptions().timeZone;
    });
  }
  function act(button) {
    var status = document.getElementById(button.dataset.status || 'action-status');
    var buttons = document.querySelectorAll('button[data-action]');
    buttons.forEach(function (b) { b.disabled = true; });
    if (status) status.textContent = button.dataset.pending || 'Working…';
    fetch(button.dataset.action, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-rowbridge-csrf': '1' },
      body: '{}'
    }).then(function (res) {
      return res.text().then(function (text) {
        var body;
        try { body = JSON.parse(text); } catch (e) { body = { message: text.trim() }; }
        if (status) {
          status.textContent = body.message || ('HTTP ' + res.status);
          status.className = res.ok ? 'done' : 'reason';
          if (res.ok && body.runId) {
            var link = document.createElement('a');
            link.href = '/runs/' + encodeURIComponent(body.runId);
            link.textContent = ' Open the run';
            status.appendChild(link);
          }
        }
        if (res.ok && button.dataset.reload === 'true') window.location.reload();
      });
    }).catch(function (err) {
      if (status) { status.textContent = 'The request failed: ' + err.message; status.className = 'reason'; }
    }).finally(function () {
      buttons.forEach(function (b) { b.disabled = false; });
    });
  }
  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button[data-action]');
    if (button) { event.preventDefault(); act(button); }
  });
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', localise);
  else localise();
})();
`;
