/**
 * The dashboard's one script, served from `/assets/dashboard.js` (same origin, so the
 * CSP's `script-src 'self'` allows it and no inline script is ever needed). It does
 * three things a server cannot: show times in the viewer's own zone; send the job and
 * conflict actions as JSON POSTs with the CSRF header (a value typed for a conflict too), which a plain HTML form cannot (the
 * access guard refuses form bodies, so that no other site's form can post here); and
 * keep a page that shows a run still going (`<body data-live>`) current, reloading its
 * content every few seconds while the tab is visible and stopping once the page it
 * loads is quiet, so an idle dashboard left open asks nothing of Redis.
 * Pages work without it: times then read in UTC, the buttons do nothing, and a live
 * page is as fresh as its last load.
 */

/** Where the script is served. */
export const DASHBOARD_SCRIPT_PATH = '/assets/dashboard.js';

/** How often a live page reloads its content. */
export const LIVE_REFRESH_MS = 5000;

export const DASHBOARD_SCRIPT = `'use strict';
(function () {
  var LIVE_MS = ${LIVE_REFRESH_MS};
  var timer = null;
  var loading = false;
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
  // A button that names an input (data-value-from) sends its text as {"value": ...}.
  function body(button) {
    var input = button.dataset.valueFrom && document.getElementById(button.dataset.valueFrom);
    return input ? JSON.stringify({ value: input.value }) : '{}';
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
      body: body(button)
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
        else if (res.ok && body.runId) { document.body.dataset.live = 'true'; schedule(); }
      });
    }).catch(function (err) {
      if (status) { status.textContent = 'The request failed: ' + err.message; status.className = 'reason'; }
    }).finally(function () {
      buttons.forEach(function (b) { b.disabled = false; });
    });
  }
  function live() {
    return document.body.dataset.live === 'true' && document.visibilityState === 'visible';
  }
  function schedule() {
    clearTimeout(timer);
    timer = live() ? setTimeout(refresh, LIVE_MS) : null;
  }
  function refresh() {
    timer = null;
    if (!live() || loading) return;
    // Someone choosing a filter or acting: their page stays put until the next turn.
    var focused = document.activeElement;
    if ((focused && /^(INPUT|SELECT|TEXTAREA)$/.test(focused.tagName)) ||
        document.querySelector('button[data-action]:disabled')) { schedule(); return; }
    loading = true;
    fetch(window.location.href, { credentials: 'same-origin', headers: { accept: 'text/html' } })
      .then(function (res) {
        if (!res.ok) throw new Error('HTTP ' + res.status);
        return res.text();
      })
      .then(function (text) {
        var doc = new DOMParser().parseFromString(text, 'text/html');
        var main = doc.querySelector('main');
        var old = document.querySelector('main');
        if (!main || !old) return;
        // An action's answer stays where the operator read it.
        old.querySelectorAll('[role=status][id]').forEach(function (el) {
          var twin = main.querySelector('#' + CSS.escape(el.id));
          if (twin) { twin.replaceChildren.apply(twin, Array.from(el.childNodes)); twin.className = el.className; }
        });
        old.replaceWith(document.adoptNode(main));
        document.title = doc.title;
        if (doc.body.dataset.live === 'true') document.body.dataset.live = 'true';
        else delete document.body.dataset.live;
        localise();
      })
      .catch(function () { /* a missed turn: the next one tries again */ })
      .finally(function () { loading = false; schedule(); });
  }
  document.addEventListener('visibilitychange', function () {
    // Hidden: nothing is asked. Back in view: the page catches up at once.
    if (document.visibilityState === 'visible') refresh();
    else { clearTimeout(timer); timer = null; }
  });
  document.addEventListener('click', function (event) {
    var button = event.target.closest && event.target.closest('button[data-action]');
    if (button) { event.preventDefault(); act(button); }
  });
  function start() { localise(); schedule(); }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
`;
