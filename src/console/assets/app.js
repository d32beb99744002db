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
    cell(tr, 'cpu', r.cpu_ms + ' ms');
    cell(tr, 'mem', Math.floor(r.memory / 1048576) + ' MiB');
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
  async function refresh() {
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
    setTimeout(refresh, 1000);
  }
  fAgent.addEventListener('input', filter);
  fState.addEventListener('change', filter);
  filter();
  setTimeout(refresh, 1000);
})();
