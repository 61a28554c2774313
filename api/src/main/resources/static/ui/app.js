// The rulesync dashboard: plain ES modules served by the api, no build step and nothing from the internet.
// Every number on a page comes from the api's /api/v1 answers, asked with the token typed into the login form;
// the token lives in this tab's sessionStorage only. Pages ask again every REFRESH_MS, so they follow versions and acks.

const REFRESH_MS = 2000;
const TOKEN = 'rulesync.token';
const main = document.getElementById('main');
let refreshTimer = null;
let view = null; // the current page: {render: async () => {...}}

// ---------- the api ----------

class ApiProblem extends Error {
  constructor(status, title, detail) {
    super(`${status}${title ? ' ' + title : ''}${detail ? ': ' + detail : ''}`);
    this.status = status;
  }
}

async function api(path, options = {}) {
  const headers = { Accept: 'application/json', Authorization: 'Bearer ' + sessionStorage.getItem(TOKEN) };
  if (options.body) headers['Content-Type'] = options.type || 'application/json';
  let r;
  try {
    r = await fetch(path, { method: options.method, body: options.body, headers });
  } catch (e) {
    throw new ApiProblem(0, 'the api cannot be reached', String(e.message || e));
  }
  const text = await r.text();
  if (!r.ok) {
    let p = {};
    try { p = JSON.parse(text); } catch (e) { p = { detail: text.split('\n')[0] }; }
    if (r.status === 401 && !options.login) {
      logout('Your token is no longer accepted; log in again.');
    }
    throw new ApiProblem(r.status, p.title, p.detail);
  }
  const type = r.headers.get('Content-Type') || '';
  return { status: r.status, body: type.includes('json') ? JSON.parse(text) : text };
}

const get = async (path) => (await api(path)).body;
const enc = encodeURIComponent;

// ---------- helpers ----------

function h(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

// A time as the operator's clock shows it, to the second (not "5s ago": a page whose text does not change is not redrawn).
function when(iso) {
  if (!iso) return '-';
  const d = new Date(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `<span title="${h(iso)}">${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}</span>`;
}

// Replaces the page's content only when it differs: a refresh that finds nothing new leaves the page (and what the
// operator is pointing at) alone. Returns whether it replaced it, so listeners are attached to new content only.
let shown = '';
function show(html) {
  if (html === shown && main.innerHTML !== '') return false;
  main.innerHTML = html;
  shown = html;
  return true;
}

// A lag in the largest two units: 45s, 3m 20s, 5h 12m, 3d 7h.
function duration(s) {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${Math.floor(s % 3600 / 60)}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor(s % 86400 / 3600)}h`;
}

const plural = (n, one, many) => `${n} ${n === 1 ? one : many}`;

function operator() {
  return sessionStorage.getItem('rulesync.role') === 'operator';
}

// A version's cause (the events or the operator action that made it) in one line.
function stateBadge(c) {
  if (c.pinned) return `<span class="badge pinned">pinned to v${h(c.pinned.toVersion)}</span>`;
  const r = c.rollout;
  if (r && r.state !== 'complete') return `<span class="badge ${h(r.state)}">rollout ${h(r.state)} v${h(r.version)}</span>`;
  return '<span class="badge">live</span>';
}

function bar(n) {
  const c = n.converged || 0, b = n.behind || 0, f = n.failed || 0, all = c + b + f;
  if (all === 0) return '<div class="bar" title="no node has acknowledged yet"></div>';
  const pc = (x) => (100 * x / all).toFixed(2) + '%';
  return `<div class="bar" title="${c} converged, ${b} behind, ${f} failed"><span class="converged" style="width:${pc(c)}"></span>`
    + `<span class="behind" style="width:${pc(b)}"></span><span class="failed" style="width:${pc(f)}"></span></div>`;
}

function counts(n) {
  return `<span class="counts">${n.converged || 0} converged, ${n.behind || 0} behind, ${n.failed || 0} failed</span>`;
}

// ---------- login ----------

function showLogin(message) {
  stopRefresh();
  document.getElementById('nav').hidden = true;
  document.getElementById('logout').hidden = true;
  document.getElementById('who').textContent = '';
  shown = '';
  main.innerHTML = `<form class="login" id="login">
      <h1>Log in</h1>
      <p class="muted">Paste an api token (viewer or operator). It stays in this browser tab only.</p>
      <label for="token">Token</label>
      <input id="token" name="token" type="password" autocomplete="off" required placeholder="rs_...">
      <p id="login-error" class="error" role="alert">${h(message || '')}</p>
      <button type="submit" id="login-submit">Log in</button>
    </form>`;
  document.getElementById('login').addEventListener('submit', async (e) => {
    e.preventDefault();
    const token = document.getElementById('token').value.trim();
    const error = document.getElementById('login-error');
    sessionStorage.setItem(TOKEN, token);
    try {
      const me = (await api('/api/v1/whoami', { login: true })).body;
      sessionStorage.setItem('rulesync.role', me.role);
      sessionStorage.setItem('rulesync.name', me.name);
      route();
    } catch (err) {
      sessionStorage.removeItem(TOKEN);
      error.textContent = err.status === 401 ? 'This token is not accepted (401): check that you pasted all of it, and that it is one of this api\'s tokens.'
        : err.status === 403 ? 'This token may not use the dashboard (403): it is an agent\'s. Use a viewer or operator token.'
        : 'Cannot log in: ' + err.message;
    }
  });
}

// Shown by the login form the next route draws (a hash change redraws the page).
let loginMessage = '';

function logout(message) {
  sessionStorage.clear();
  loginMessage = message;
  if (location.hash && location.hash !== '#/') {
    location.hash = '#/'; // route() draws the login form with the message
  } else {
    route();
  }
}

document.getElementById('logout').addEventListener('click', () => logout(''));

// ---------- pages ----------

const fleetPage = {
  async render() {
    const { clusters } = await get('/api/v1/clusters');
    show(`<h1>Fleet</h1>
      <table id="clusters"><thead><tr><th>Cluster</th><th>Version</th><th>State</th><th>Nodes</th><th>Node states</th><th>Refused objects</th></tr></thead><tbody>
      ${clusters.map((c) => `<tr data-cluster="${h(c.cluster)}">
        <td><a href="#/clusters/${enc(c.cluster)}">${h(c.cluster)}</a></td>
        <td><a href="#/clusters/${enc(c.cluster)}/versions/${c.version}">v${c.version}</a> ${when(c.createdAt)}</td>
        <td>${stateBadge(c)}</td><td>${bar(c.nodes)}</td><td>${counts(c.nodes)}</td><td>${c.refusedObjects}</td></tr>`).join('')}
      </tbody></table>
      ${clusters.length ? '' : '<p class="muted">No cluster has a version yet.</p>'}`);
  },
};

function clusterPage(cluster) {
  return {
    async render() {
      const [c, history, nodes, rollout] = await Promise.all([get(`/api/v1/clusters/${enc(cluster)}`), get(`/api/v1/clusters/${enc(cluster)}/versions?limit=50`),
        allNodes(cluster), get(`/api/v1/clusters/${enc(cluster)}/rollout`)]);
      const ops = operator();
      const lagging = nodes.nodes.filter((n) => n.state !== 'converged').slice(0, 50);
      const replaced = show(`<h1>${h(cluster)} <span class="muted">v${history.head}</span> ${stateBadge(c)}</h1>
        <p><a href="#/clusters/${enc(cluster)}/plan">Plan a change</a>: what manifests would do to each node's rules, before they are applied.</p>
        ${c.pinned ? `<div class="notice">Pinned to version ${h(c.pinned.toVersion)} by ${h(c.pinned.actor)}: ${h(c.pinned.reason)}.
          Changes are compiled but not published until the cluster is resumed.
          ${ops ? `<button type="button" class="small operator-action" id="resume">Resume…</button>` : ''}</div>` : ''}
        ${rollout.state !== 'none' && rollout.version ? rolloutBox(rollout) : ''}
        <h2>Nodes <span class="muted">(${nodes.nodes.length})</span></h2>
        <p class="legend"><span><i class="converged"></i>converged ${nodes.counts.converged || 0}</span><span><i class="behind"></i>behind ${nodes.counts.behind || 0}</span>
          <span><i class="failed"></i>failed ${nodes.counts.failed || 0}</span><span><i class="unknown"></i>unknown ${nodes.counts.unknown || 0}</span></p>
        <div class="grid" id="node-grid">${nodes.nodes.map((n) => `<a class="${h(n.state)}" data-node="${h(n.node)}"
          title="${h(n.node)}: ${h(n.state)}, runs v${n.running}${n.behindVersions ? `, ${n.behindVersions} behind (${duration(n.lagSeconds)})` : ''}${n.lastError ? ' — ' + h(n.lastError.message) : ''}"
          href="#/clusters/${enc(cluster)}/versions/${history.head}?node=${enc(n.node)}"></a>`).join('')}</div>
        ${lagging.length ? `<h2>Behind or failing</h2><table id="lagging"><thead><tr><th>Node</th><th>State</th><th>Runs</th><th>Lag</th><th>Last error</th></tr></thead><tbody>
          ${lagging.map((n) => `<tr><td>${h(n.node)}</td><td>${h(n.state)}</td><td>v${n.running}</td><td>${plural(n.behindVersions, 'version', 'versions')}, ${duration(n.lagSeconds)}</td>
          <td class="wrap">${h(n.lastError ? n.lastError.message : '')}</td></tr>`).join('')}</tbody></table>` : ''}
        <h2>Versions</h2>
        <table id="versions"><thead><tr><th>Version</th><th>Created</th><th>Changed</th><th>Cause</th>${ops ? '<th><span class="sr-only">Actions</span></th>' : ''}</tr></thead><tbody>
        ${history.versions.map((v) => `<tr data-version="${v.version}"><td><a href="#/clusters/${enc(cluster)}/versions/${v.version}">v${v.version}</a></td>
          <td>${when(v.createdAt)}</td><td>${v.fragmentsChanged} fragments, ${v.nodesChanged} nodes</td><td class="wrap">${h(v.causeSummary || '-')}</td>
          ${ops ? `<td>${v.version !== history.head ? `<button type="button" class="small operator-action rollback" data-to="${v.version}">Roll back to v${v.version}…</button>` : ''}</td>` : ''}</tr>`).join('')}
        </tbody></table>`);
      if (!replaced) return;
      main.querySelectorAll('button.rollback').forEach((b) => b.addEventListener('click', () => confirmAction({
        title: `Roll back ${cluster} to version ${b.dataset.to}?`,
        text: `A new version with version ${b.dataset.to}'s rules is published to every node, and ${cluster} is pinned there until it is resumed.`,
        ok: `Roll back ${cluster} to v${b.dataset.to}`,
        send: (reason) => api(`/api/v1/clusters/${enc(cluster)}/rollback`, { method: 'POST', body: JSON.stringify({ toVersion: Number(b.dataset.to), reason }) }),
      })));
      const what = { promote: 'opens the next wave now (or resumes a paused rollout)', pause: 'opens no further wave until it is promoted',
        abort: 'halts it where it is: the nodes that have it keep it, no further wave gets it' };
      main.querySelectorAll('button.rollout-step').forEach((b) => b.addEventListener('click', () => confirmAction({
        title: `${b.dataset.step[0].toUpperCase() + b.dataset.step.slice(1)} the rollout of ${cluster} version ${rollout.version}?`,
        text: `This ${what[b.dataset.step]}.`,
        ok: `${b.dataset.step[0].toUpperCase() + b.dataset.step.slice(1)} v${rollout.version}`,
        send: (reason) => api(`/api/v1/clusters/${enc(cluster)}/rollout/${b.dataset.step}`, { method: 'POST', body: JSON.stringify({ reason }) }),
      })));
      const resume = document.getElementById('resume');
      if (resume) resume.addEventListener('click', () => confirmAction({
        title: `Resume ${cluster}?`,
        text: `A new version is published from ${cluster}'s current state, and the pin to version ${c.pinned.toVersion} is lifted.`,
        ok: `Resume ${cluster}`,
        send: (reason) => api(`/api/v1/clusters/${enc(cluster)}/resume`, { method: 'POST', body: JSON.stringify({ reason }) }),
      }));
    },
  };
}

function rolloutBox(r) {
  const steering = operator() && (r.state === 'rolling' || r.state === 'paused');
  const verbs = !steering ? '' : ['promote', 'pause', 'abort'].filter((v) => v !== 'pause' || r.state === 'rolling')
    .map((v) => `<button type="button" class="small operator-action rollout-step" data-step="${v}">${v[0].toUpperCase() + v.slice(1)}…</button>`).join(' ');
  return `<h2>Rollout of v${r.version} <span class="badge ${h(r.state)}">${h(r.state)}</span> ${verbs}</h2>
    ${r.cause ? `<p class="error">${h(r.cause)}</p>` : ''}
    <table id="waves"><thead><tr><th>Wave</th><th>Open</th><th>Nodes</th><th>Converged</th><th>Behind</th><th>Failed</th></tr></thead><tbody>
    ${(r.waves || []).map((w) => `<tr><td>${h(w.name)}</td><td>${w.open ? 'yes' : 'no'}</td><td>${w.nodes}</td><td>${w.converged}</td><td>${w.behind}</td><td>${w.failed}</td></tr>`).join('')}
    </tbody></table>${r.bakeLeftSeconds ? `<p class="muted">${duration(r.bakeLeftSeconds)} left to bake.</p>` : ''}`;
}

async function allNodes(cluster) {
  const first = await get(`/api/v1/clusters/${enc(cluster)}/nodes?limit=1000`);
  const nodes = [...first.nodes];
  for (let page = first; page.next && nodes.length < 10000;) {
    page = await get(page.next);
    nodes.push(...page.nodes);
  }
  return { ...first, nodes };
}

function versionPage(cluster, version, node) {
  let rulesNode = node;
  let rulesMode = 'iptables';
  let search = '';
  return {
    refresh: false, // a version never changes
    async render() {
      const base = `/api/v1/clusters/${enc(cluster)}`;
      const [v, diff, nodes] = await Promise.all([get(`${base}/versions/${enc(version)}`),
        version > 1 ? get(`${base}/versions/${enc(version)}/diff`) : Promise.resolve(null), allNodes(cluster)]);
      const names = nodes.nodes.map((n) => n.node);
      rulesNode = rulesNode || names[0];
      show(`<h1><a href="#/clusters/${enc(cluster)}">${h(cluster)}</a> v${v.version}</h1>
        <p>${when(v.createdAt)} — ${v.fragmentsChanged} fragments and ${v.nodesChanged} nodes changed.</p>
        <p class="wrap"><strong>Cause:</strong> ${h(v.causeSummary || '-')}</p>
        <h2>Changes from v${v.version - 1}</h2>
        ${diff ? `<pre id="diff" tabindex="0" aria-label="What this version changed">${diffHtml(diff)}</pre>` : '<p class="muted">The first version.</p>'}
        <h2>A node's rules</h2>
        <div class="row"><label for="rules-node">Node</label><select id="rules-node">${names.map((n) => `<option ${n === rulesNode ? 'selected' : ''}>${h(n)}</option>`).join('')}</select>
          <label for="rules-mode">Mode</label><select id="rules-mode">${['iptables', 'ipvs', 'nftables'].map((m) => `<option ${m === rulesMode ? 'selected' : ''}>${m}</option>`).join('')}</select>
          <label for="rules-search">Search</label><input id="rules-search" type="search" placeholder="KUBE-SVC, 10.96.0.10, ..." value="${h(search)}">
          <span id="rules-count" class="muted"></span></div>
        <pre id="mode-diff" tabindex="0" aria-label="What this version changed in the node's rules of this mode" hidden></pre>
        <pre id="rules" tabindex="0" aria-label="The node's rules"></pre>`);
      let asked = 0;
      const showRules = async () => {
        const mine = ++asked;
        const query = `node=${enc(rulesNode)}&mode=${enc(rulesMode)}`;
        let text = '';
        let modeDiff = null;
        try {
          text = rulesNode ? (await api(`${base}/versions/${enc(version)}/rules?${query}`)).body : '';
          // IPVS and nftables mode hold the node's own addresses: their changes are the node's, not a group's.
          if (rulesNode && rulesMode !== 'iptables' && version > 1) modeDiff = await get(`${base}/versions/${enc(version)}/diff?${query}`);
        } catch (e) {
          if (!(e instanceof ApiProblem)) throw e;
          text = e.message;
        }
        if (mine !== asked) return; // typed on meanwhile: a later answer shows
        const shownDiff = document.getElementById('mode-diff');
        shownDiff.hidden = !modeDiff;
        shownDiff.innerHTML = modeDiff ? diffHtml(modeDiff) : '';
        const lines = text.split('\n');
        const shown = search ? lines.filter((l) => l.toLowerCase().includes(search.toLowerCase())) : lines;
        document.getElementById('rules-count').textContent = search ? `${shown.length} of ${lines.length} lines` : `${lines.length} lines`;
        document.getElementById('rules').innerHTML = shown.map((l) => search ? mark(l, search) : h(l)).join('\n');
      };
      document.getElementById('rules-node').addEventListener('change', (e) => { rulesNode = e.target.value; showRules(); });
      document.getElementById('rules-mode').addEventListener('change', (e) => { rulesMode = e.target.value; showRules(); });
      document.getElementById('rules-search').addEventListener('input', (e) => { search = e.target.value; showRules(); });
      await showRules();
    },
  };
}

// A what-if: manifests pasted here are compiled against the cluster's stored state by the api, which stores nothing.
function planPage(cluster) {
  let manifests = '';
  let remove = false;
  return {
    refresh: false, // the operator's input stays until they plan again
    async render() {
      show(`<h1><a href="#/clusters/${enc(cluster)}">${h(cluster)}</a> plan</h1>
        <p>Paste manifests (YAML or JSON: Services, EndpointSlices, Nodes; other kinds are skipped). The api compiles the cluster's
          current state with them as the compiler would, and stores nothing.</p>
        <form id="plan-form">
          <label for="plan-manifests">Manifests</label>
          <textarea id="plan-manifests" rows="14" spellcheck="false" required>${h(manifests)}</textarea>
          <div class="row"><input type="checkbox" id="plan-delete" ${remove ? 'checked' : ''}><label for="plan-delete">Remove these objects instead of applying them</label>
            <button type="submit" id="plan-run">Plan</button></div>
        </form>
        <p id="plan-summary" role="status"></p>
        <pre id="plan-diff" tabindex="0" aria-label="What the manifests would change" hidden></pre>`);
      document.getElementById('plan-form').addEventListener('submit', async (e) => {
        e.preventDefault();
        manifests = document.getElementById('plan-manifests').value;
        remove = document.getElementById('plan-delete').checked;
        const summary = document.getElementById('plan-summary');
        const out = document.getElementById('plan-diff');
        summary.className = 'muted';
        summary.textContent = 'Planning…';
        try {
          const p = (await api(`/api/v1/clusters/${enc(cluster)}/plan${remove ? '?delete=true' : ''}`, { method: 'POST', body: manifests, type: 'application/yaml' })).body;
          summary.className = p.refused.length ? 'error' : '';
          summary.textContent = (p.changes ? `${plural(p.nodesAffected, 'node', 'nodes')} would change.` : 'No node\'s rules would change.')
            + (p.refused.length ? ` ${plural(p.refused.length, 'object', 'objects')} would be refused.` : '');
          out.innerHTML = diffHtml(p);
          out.hidden = false;
        } catch (err) {
          summary.className = 'error';
          summary.textContent = err.message;
          out.hidden = true;
        }
      });
    },
  };
}

function mark(line, q) {
  const i = line.toLowerCase().indexOf(q.toLowerCase());
  return h(line.slice(0, i)) + '<mark>' + h(line.slice(i, i + q.length)) + '</mark>' + h(line.slice(i + q.length));
}

// The api's diff as the api renders it for every reader (a unified diff, one hunk per group of nodes that saw the
// same change), coloured by each line's first characters as the command line colours it.
function diffHtml(d) {
  return (d.text || '').replace(/\n$/, '').split('\n').map((l, i) => {
    if (i < 2 && (l.startsWith('--- ') || l.startsWith('+++ '))) return `<strong>${h(l)}</strong>`;
    if (l.startsWith('@@')) return `<span class="hunk">${h(l)}</span>`;
    if (l.startsWith('+')) return `<span class="add">${h(l)}</span>`;
    if (l.startsWith('-')) return `<span class="del">${h(l)}</span>`;
    return h(l);
  }).join('\n');
}

const auditPage = {
  async render() {
    const a = await get('/api/v1/audit?limit=50');
    show(`<h1>Audit</h1>
      <table id="actions"><thead><tr><th>#</th><th>Requested</th><th>Cluster</th><th>Action</th><th>By</th><th>Reason</th><th>Status</th><th>Result</th></tr></thead><tbody>
      ${a.actions.map((x) => `<tr data-action="${x.id}"><td>${x.id}</td><td>${when(x.requestedAt)}</td><td><a href="#/clusters/${enc(x.cluster)}">${h(x.cluster)}</a></td>
        <td>${h(x.action)}${x.toVersion ? ' to v' + x.toVersion : ''}</td><td>${h(x.actor)}</td><td class="wrap">${h(x.reason)}</td><td>${h(x.status)}</td>
        <td class="wrap">${x.version ? `<a href="#/clusters/${enc(x.cluster)}/versions/${x.version}">v${x.version}</a>` : h(x.outcome || '')}</td></tr>`).join('')}
      </tbody></table>${a.actions.length ? '' : '<p class="muted">No operator action yet.</p>'}
      <h2>Rollout steps</h2>
      <table id="rollout-steps"><thead><tr><th>At</th><th>Cluster</th><th>Version</th><th>Step</th><th>Wave</th><th>By</th><th>Detail</th></tr></thead><tbody>
      ${(a.rolloutSteps || []).map((s) => `<tr><td>${when(s.at)}</td><td>${h(s.cluster)}</td><td>v${s.version}</td><td>${h(s.event)}</td><td>${h(s.wave || '')}</td>
        <td>${h(s.actor)}</td><td class="wrap">${h(s.detail)}</td></tr>`).join('')}</tbody></table>`);
  },
};

// ---------- the operator's confirmation ----------

function confirmAction({ title, text, ok, send }) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-ok').textContent = ok;
  document.getElementById('confirm-error').textContent = '';
  const reason = document.getElementById('confirm-reason');
  reason.value = '';
  const form = document.getElementById('confirm-form');
  form.onsubmit = async (e) => {
    e.preventDefault();
    if (!reason.value.trim()) {
      document.getElementById('confirm-error').textContent = 'A reason is required.';
      return;
    }
    try {
      const r = await send(reason.value.trim());
      dialog.close();
      const done = r.body;
      flash(r.status === 202 ? `Requested (audit entry ${done.id}); the compiler has not carried it out yet.`
        : done.state ? `Done: version ${done.version} is ${done.state}.` : `Done: version ${done.version}.`);
      render();
    } catch (err) {
      document.getElementById('confirm-error').textContent = err.message;
    }
  };
  document.getElementById('confirm-cancel').onclick = () => dialog.close();
  dialog.showModal();
}

function flash(message) {
  const n = document.createElement('div');
  n.className = 'notice';
  n.id = 'flash';
  n.textContent = message;
  document.getElementById('flash')?.remove();
  document.getElementById('notices').append(n);
  setTimeout(() => n.remove(), 8000);
}

// ---------- routing and refresh ----------

function route() {
  if (!sessionStorage.getItem(TOKEN)) {
    showLogin(loginMessage);
    loginMessage = '';
    return;
  }
  document.getElementById('nav').hidden = false;
  document.getElementById('logout').hidden = false;
  document.getElementById('who').textContent = `${sessionStorage.getItem('rulesync.name')} (${sessionStorage.getItem('rulesync.role')})`;
  const [path, query] = location.hash.replace(/^#/, '').split('?');
  const parts = (path || '/').split('/').filter(Boolean).map(decodeURIComponent);
  const params = new URLSearchParams(query || '');
  view = parts[0] === 'clusters' && parts.length === 2 ? clusterPage(parts[1])
    : parts[0] === 'clusters' && parts[2] === 'versions' ? versionPage(parts[1], Number(parts[3]), params.get('node'))
    : parts[0] === 'clusters' && parts[2] === 'plan' ? planPage(parts[1])
    : parts[0] === 'audit' ? auditPage : fleetPage;
  shown = '';
  render();
}

async function render() {
  stopRefresh();
  const current = view;
  try {
    await current.render();
  } catch (err) {
    if (current === view && sessionStorage.getItem(TOKEN)) show(`<p class="error" role="alert">${h(err.message)}</p>`);
  }
  if (current === view && current.refresh !== false && sessionStorage.getItem(TOKEN)) {
    refreshTimer = setTimeout(refresh, REFRESH_MS);
  }
}

// Not while the operator is typing or confirming: a new page would take their input away.
function refresh() {
  const busy = document.getElementById('confirm').open || ['INPUT', 'TEXTAREA', 'SELECT'].includes(document.activeElement?.tagName);
  if (busy) refreshTimer = setTimeout(refresh, REFRESH_MS);
  else render();
}

function stopRefresh() {
  clearTimeout(refreshTimer);
  refreshTimer = null;
}

window.addEventListener('hashchange', route);
route();
