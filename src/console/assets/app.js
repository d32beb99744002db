// app.js — the console page's only script (served from the binary; the
// Content-Security-Policy allows no other). It keeps the runs table live by
// short polling /api/runs (a request that ends: nothing stalls a proxy or a
// headless browser) and filters it; it only ever sets textContent.
'use strict';
(function () {
  const table = document.getElementById('runs');
  if (!table) return;
  const body = table.tBodies[0];
  const fAgent = document.getElementById('f-agent');
  const fState = document.getElementById('f-state');
  const live = document.getElementById('live');
  const none = document.getElementById('none');

  function fmtTime(ms) {
    if (!ms) return '';
    const d = new Date(ms);
    return d.toISOString().replace('T', ' ').replace('Z', '');
  }
  // the same text as the server's console_age
  function fmtAge(ms) {
    const s = ms > 0 ? Math.floor(ms / 1000) : 0;
    if (s < 60) return s + 's';
    if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60) + 's';
    if (s < 86400) return Math.floor(s / 3600) + 'h ' + Math.floor(s % 3600 / 60) + 'm';
    return Math.floor(s / 86400) + 'd ' + Math.floor(s % 86400 / 3600) + 'h';
  }
  function cell(tr, cls, text) {
    const td = document.createElement('td');
    td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
    return td;
  }
  function row(r) {
    const tr = document.createElement('tr');
    tr.dataset.run = r.run;
    tr.dataset.agent = r.agent;
    tr.dataset.state = r.state;
    const td = document.createElement('td');
    td.className = 'run';
    const a = document.createElement('a');
    a.href = '/run/' + encodeURIComponent(r.run);
    a.textContent = r.run;
    td.appendChild(a);
    tr.appendChild(td);
    cell(tr, 'agent', r.agent);
    cell(tr, 'uid', String(r.uid));
    cell(tr, 'state', r.state);
    cell(tr, 'started', fmtTime(r.started_ms)).dataset.ms = String(r.started_ms);
    cell(tr, 'age', r.started_ms ? fmtAge(Date.now() - r.started_ms) : '');
    cell(tr, 'cpu', r.cpu_ms + ' ms');
    // 0: no memory cgroup serves the run (cgroup v1 without a limit)
    cell(tr, 'mem', r.memory ? Math.floor(r.memory / 1048576) + ' MiB' : '—');
    // null: not known to this console (through the daemon, without its log)
    cell(tr, 'egress', r.egress_allowed === null || r.egress_refused === null
      ? '—' : r.egress_allowed + ' / ' + r.egress_refused);
    cell(tr, 'grants', String(r.grants));
    cell(tr, 'command', r.command);
    return tr;
  }
  function filter() {
    const agent = fAgent.value.trim();
    const state = fState.value;
    let shown = 0;
    for (const tr of body.rows) {
      const ok = (!agent || tr.dataset.agent.includes(agent)) &&
        (!state || tr.dataset.state === state);
      tr.hidden = !ok;
      if (ok) shown++;
    }
    none.hidden = shown !== 0;
  }
  // every POLL_MS from the start of one request to the next's: with the
  // console's listing at most 400 ms old, a run is on the page within a
  // second of its start (console_browser.sh measures it)
  const POLL_MS = 500;
  async function refresh() {
    const began = Date.now();
    try {
      const res = await fetch('/api/runs', {credentials: 'same-origin', cache: 'no-store'});
      if (res.status === 401) {
        live.textContent = 'logged out';
        return;
      }
      const data = await res.json();
      const rows = data.runs.map(row);
      body.replaceChildren(...rows);
      filter();
      live.textContent = 'live · ' + rows.length + ' runs';
    } catch (e) {
      live.textContent = 'reconnecting…';
    }
    setTimeout(refresh, Math.max(0, POLL_MS - (Date.now() - began)));
  }
  fAgent.addEventListener('input', filter);
  fState.addEventListener('change', filter);
  filter();
  setTimeout(refresh, POLL_MS);
})();

// The audit health chart: one line per event, drawn from the page's own
// data (data-series), as SVG made here — no chart library, nothing fetched.
(function () {
  const box = document.getElementById('chart');
  if (!box) return;
  const NS = 'http://www.w3.org/2000/svg';
  const series = JSON.parse(box.dataset.series);
  const from = Number(box.dataset.from);
  const step = Number(box.dataset.step);
  const names = Object.keys(series);
  const n = series[names[0]].length;
  const max = Math.max(1, ...names.map((k) => Math.max(...series[k])));
  const W = 720, H = 220, L = 40, B = 24, T = 8, R = 8;
  const colors = ['#1a73e8', '#b00020', '#e37400', '#7b1fa2'];
  function el(tag, attrs, text) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const svg = el('svg', {viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img',
    'aria-label': 'audit events per half hour, last 24 hours'});
  const x = (i) => L + (i * (W - L - R)) / (n - 1);
  const y = (v) => H - B - (v * (H - B - T)) / max;
  svg.appendChild(el('line', {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#9aa0a6'}));
  svg.appendChild(el('line', {x1: L, y1: T, x2: L, y2: H - B, stroke: '#9aa0a6'}));
  svg.appendChild(el('text', {x: L - 4, y: T + 10, 'text-anchor': 'end', 'font-size': 11}, String(max)));
  svg.appendChild(el('text', {x: L - 4, y: H - B, 'text-anchor': 'end', 'font-size': 11}, '0'));
  for (let i = 0; i < n; i += 8) {
    const t = new Date(from + i * step).toISOString().slice(11, 16);
    svg.appendChild(el('text', {x: x(i), y: H - 6, 'text-anchor': 'middle', 'font-size': 11}, t));
  }
  names.forEach((k, j) => {
    const pts = series[k].map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const line = el('polyline', {points: pts, fill: 'none', stroke: colors[j % colors.length],
      'stroke-width': 2, 'data-event': k});
    svg.appendChild(line);
    svg.appendChild(el('rect', {x: L + 8 + j * 150, y: T, width: 10, height: 10,
      fill: colors[j % colors.length]}));
    svg.appendChild(el('text', {x: L + 22 + j * 150, y: T + 9, 'font-size': 11}, k));
  });
  box.appendChild(svg);
})();
