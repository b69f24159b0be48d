// Agents: the registry the key may use, an agent's description (base prompt, few-shots, funcs, sample queries),
// routing a question to see the scores, and registering an agent by URL.
import { useState } from 'preact/hooks';
import { gql, gqlFull } from './api.js';
import { ConnectMCP } from './mcpconnect.js';
import { ErrorBox, fmtTime, html, Loading, Page, ScoreBar, useAction, useLoad, useSession } from './ui.js';

const AGENT = `agentId handle name description kind published queries queryUrl funcUrl moreInfoUrl model created modified owner { username }`;

export function Agents({ args }) {
  const handle = args[0] || '';
  const { key } = useSession();
  const list = useLoad(() => gql(key, `{ allAgents(first: 1000) { ${AGENT} } }`), [key]);
  const [query, setQuery] = useState('');
  return html`<${Page} title=${handle ? `Agent · ${handle}` : 'Agents'}>
    <div class="split">
      <div class="main-col">
        ${handle ? html`<${AgentDetail} key=${handle} handle=${handle} onTry=${setQuery} onChanged=${list.reload} />` : html`<${AgentList} list=${list} />`}
      </div>
      <aside class="side">
        <${TryRoute} query=${query} setQuery=${setQuery} />
        <${Register} onDone=${list.reload} />
        <${ConnectMCP} />
      </aside>
    </div>
  <//>`;
}

function AgentList({ list }) {
  if (list.error) return html`<${ErrorBox} error=${list.error} />`;
  if (!list.data) return html`<${Loading} what="agents" />`;
  return html`<table class="grid">
    <caption>Agents you may use: built-ins, yours, and published ones</caption>
    <thead><tr><th scope="col">Handle</th><th scope="col">Kind</th><th scope="col">Owner</th><th scope="col">Sample queries</th><th scope="col">Description</th></tr></thead>
    <tbody>${list.data.allAgents.map((a) => html`<tr>
      <td><a href=${'#/agents/' + a.handle}>${a.handle}</a>${a.published ? html` <span class="badge">published</span>` : null}</td>
      <td>${a.kind}</td><td>${a.owner ? a.owner.username : html`<span class="muted">built-in</span>`}</td>
      <td>${a.queries.length || (a.owner ? html`<span class="warn" title="The router never picks an agent without sample queries; ask it by handle">0 · not routed to</span>` : '0')}</td><td>${a.description || a.name || ''}</td></tr>`)}</tbody>
  </table>`;
}

// funcsOf lists the funcs an agent's few-shots call (Ask Func[name]).
const funcsOf = (shots) => [...new Set((shots || []).flatMap((s) => [...s.matchAll(/Ask Func\[([^\]]+)\]/g)].map((m) => m[1])))];

function lineClass(line) {
  const m = /^(Q|Thought|Ask Func\[[^\]]*\]|Func\[[^\]]*\] says|Ask Agent\[[^\]]*\]|Agent\[[^\]]*\] says|A):/.exec(line);
  if (!m) return '';
  if (m[1] === 'Q') return 'l-q';
  if (m[1] === 'A') return 'l-a';
  if (m[1] === 'Thought') return 'l-thought';
  return m[1].endsWith('says') ? 'l-says' : 'l-ask';
}

function AgentDetail({ handle, onTry, onChanged }) {
  const { key, me } = useSession();
  const one = useLoad(() => gql(key, `query($h: String!) { agentByHandle(handle: $h) { ${AGENT} basePrompt fewShots } }`, { h: handle }), [key, handle]);
  const refresh = useAction(async () => {
    await gql(key, `mutation($h: String!) { refreshAgent(handle: $h) { agent { handle } } }`, { h: handle });
    one.reload();
    onChanged();
    return 'Read its description again.';
  });
  const remove = useAction(async () => {
    await gql(key, `mutation($h: String!) { deleteAgent(handle: $h) { agent { handle } } }`, { h: handle });
    onChanged();
    location.hash = '#/agents';
  });
  if (one.error) return html`<${ErrorBox} error=${one.error} />`;
  if (!one.data) return html`<${Loading} what=${handle} />`;
  const a = one.data.agentByHandle;
  if (!a) return html`<p role="alert" class="error">No agent ${handle} that your key may use. <a href="#/agents">All agents</a></p>`;
  const mine = a.owner && a.owner.username === me.username;
  const funcs = funcsOf(a.fewShots);
  return html`<article class="agent">
    <p><a href="#/agents">← All agents</a></p>
    <h2>${a.name || a.handle} <span class="badge">${a.kind}</span>${a.published ? html` <span class="badge">published</span>` : null}</h2>
    ${a.description ? html`<p>${a.description}</p>` : null}
    <dl class="kv">
      <div><dt>Handle</dt><dd><code>${a.handle}</code> (<code>${a.agentId}</code>)</dd></div>
      <div><dt>Owner</dt><dd>${a.owner ? a.owner.username : 'built-in'}</dd></div>
      ${a.funcUrl ? html`<div><dt>Funcs URL</dt><dd><code>${a.funcUrl}</code></dd></div>` : null}
      ${a.queryUrl ? html`<div><dt>Query URL</dt><dd><code>${a.queryUrl}</code></dd></div>` : null}
      <div><dt>Model</dt><dd>${a.model || html`<span class="muted">the platform's default</span>`}</dd></div>
      <div><dt>Modified</dt><dd>${fmtTime(a.modified)}</dd></div>
    </dl>
    ${mine ? html`<div class="row">
      <button type="button" onClick=${() => refresh.run()} disabled=${refresh.busy}>Refresh from its URL</button>
      <${TwoStep} label="Delete agent" confirm=${`Really delete ${a.handle}?`} onConfirm=${() => remove.run()} busy=${remove.busy} />
      <span aria-live="polite" class="muted">${refresh.done || ''}</span>
    </div><${ErrorBox} error=${refresh.error || remove.error} />` : null}
    <h3>Sample queries</h3>
    ${a.queries.length ? html`<ul class="queries">${a.queries.map((q) => html`<li>${q} <button type="button" class="small" onClick=${() => onTry(q)}>Try routing</button></li>`)}</ul>` : html`<p class="muted">None: the router never picks this agent.</p>`}
    <h3>Funcs</h3>
    ${funcs.length ? html`<ul>${funcs.map((f) => html`<li><code>${f}</code></li>`)}</ul>` : html`<p class="muted">Its few-shots call no func.</p>`}
    <h3>Base prompt</h3>
    ${a.basePrompt ? html`<pre class="text">${a.basePrompt}</pre>` : html`<p class="muted">None.</p>`}
    <h3>Few-shots</h3>
    ${(a.fewShots || []).length ? (a.fewShots || []).map((s, i) => html`<figure class="fewshot"><figcaption>Example ${i + 1}</figcaption>
      <pre>${s.split('\n').map((l) => html`<span class=${lineClass(l)}>${l}</span>${'\n'}`)}</pre></figure>`) : html`<p class="muted">None.</p>`}
  </article>`;
}

// TwoStep is a dangerous button that asks once more, in place, before it acts.
export function TwoStep({ label, confirm, onConfirm, busy }) {
  const [armed, setArmed] = useState(false);
  if (!armed) return html`<button type="button" class="danger" onClick=${() => setArmed(true)} disabled=${busy}>${label}</button>`;
  return html`<span class="confirm" role="group" aria-label=${confirm}>${confirm}
    <button type="button" class="danger" autofocus onClick=${() => { setArmed(false); onConfirm(); }}>Yes</button>
    <button type="button" onClick=${() => setArmed(false)}>No</button></span>`;
}

function TryRoute({ query, setQuery }) {
  const { key } = useSession();
  const route = useAction(async (q) => (await gql(key, `query($q: String!) { route(query: $q, first: 5) { agent { handle } score fits } }`, { q })).route);
  const submit = (e) => {
    e.preventDefault();
    if (query.trim()) route.run(query.trim());
  };
  return html`<section class="card" aria-labelledby="route-h">
    <h2 id="route-h">Try routing</h2>
    <form class="stack" onSubmit=${submit}>
      <label for="route-q">A question</label>
      <input id="route-q" value=${query} onInput=${(e) => setQuery(e.target.value)} placeholder="Generate a random number between 1 and 10" />
      <button type="submit" disabled=${route.busy}>Route</button>
    </form>
    <${ErrorBox} error=${route.error} />
    ${route.done ? html`<table class="scores" id="route-result"><caption>What the router would pick, best first</caption>
      <thead><tr><th scope="col">Agent</th><th scope="col">Score</th></tr></thead>
      <tbody>${route.done.map((m) => html`<tr data-agent=${m.agent.handle}><td><a href=${'#/agents/' + m.agent.handle}>${m.agent.handle}</a></td><td><${ScoreBar} score=${m.score} fits=${m.fits} /></td></tr>`)}</tbody>
      </table>${route.done.length ? null : html`<p class="muted">No agent has sample queries to compare with.</p>`}` : null}
  </section>`;
}

// HANDLE_PATTERN is the registry's rule for handles (the pattern attribute is a regular expression in v mode,
// where a literal '-' in a class is escaped).
const HANDLE_PATTERN = '[a-z0-9][a-z0-9_\\-]*';

function Register({ onDone }) {
  const { key } = useSession();
  const [f, setF] = useState({ handle: '', url: '', kind: 'codeshot', published: false });
  const set = (k) => (e) => setF({ ...f, [k]: e.target.type === 'checkbox' ? e.target.checked : e.target.value });
  const reg = useAction(async () => {
    const data = { handle: f.handle.trim(), published: f.published };
    if (f.kind === 'standalone') data.queryUrl = f.url.trim();
    else data.funcUrl = f.url.trim();
    const d = await gqlFull(key, `mutation($d: AgentInput!) { createAgent(agentData: $d) { agent { handle kind queries } } }`, { d: data });
    onDone();
    return { ...d.data.createAgent.agent, warnings: d.extensions.warnings || [] };
  });
  const done = reg.done;
  return html`<section class="card" aria-labelledby="reg-h">
    <h2 id="reg-h">Register an agent by URL</h2>
    <form class="stack" onSubmit=${(e) => { e.preventDefault(); reg.run(); }}>
      <label for="reg-handle">Handle</label>
      <input id="reg-handle" required pattern=${HANDLE_PATTERN} title="lower-case letters, digits, - and _" value=${f.handle} onInput=${set('handle')} />
      <label for="reg-url">URL</label>
      <input id="reg-url" type="url" required value=${f.url} onInput=${set('url')} placeholder="http://127.0.0.1:8181/" />
      <fieldset><legend>What answers at the URL</legend>
        <label><input type="radio" name="reg-kind" value="codeshot" checked=${f.kind === 'codeshot'} onChange=${set('kind')} /> A Code Shot agent: its description at GET /, its funcs</label>
        <label><input type="radio" name="reg-kind" value="standalone" checked=${f.kind === 'standalone'} onChange=${set('kind')} /> A standalone agent: it answers queries itself</label>
      </fieldset>
      <label><input type="checkbox" checked=${f.published} onChange=${set('published')} /> Published (every account may use it)</label>
      <button type="submit" disabled=${reg.busy}>${reg.busy ? 'Reading its description…' : 'Register'}</button>
    </form>
    <${ErrorBox} error=${reg.error} />
    ${done ? html`<div role="status" id="reg-done">
      <p>Registered <a href=${'#/agents/' + done.handle}>${done.handle}</a> (${done.kind}, ${done.queries.length} sample ${done.queries.length === 1 ? 'query' : 'queries'}).</p>
      ${done.warnings.map((w) => html`<p class="warning">${w}</p>`)}
      ${done.queries.length ? null : html`<p class="warning" id="reg-unroutable">The router never picks an agent without sample queries:
        ${done.warnings.length ? ' once its URL answers, use Refresh on its page to read its description.' : ' ask it by handle, or give it some in its description at GET / and use Refresh on its page.'}</p>`}
    </div>` : null}
  </section>`;
}
