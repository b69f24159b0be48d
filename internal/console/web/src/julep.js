// Julep (the /julep face, read only): agents with their tools, docs and tasks; users with their docs; a task's
// executions; an execution with its transitions. Routes: #/julep, #/julep/agent/ID, #/julep/user/ID,
// #/julep/task/ID, #/julep/execution/ID.
import { rest } from './api.js';
import { ErrorBox, fmtTime, html, KeyValues, Loading, Page, useLoad, useSession, Value } from './ui.js';

const J = '/julep';
const enc = encodeURIComponent;
const items = async (key, path) => (await rest(key, 'GET', J + path + (path.includes('?') ? '&' : '?') + 'limit=100')).items || [];

export function Julep({ args }) {
  const [kind, id] = args;
  const views = { agent: AgentView, user: UserView, task: TaskView, execution: ExecutionView };
  const View = views[kind];
  const titles = { agent: 'Julep agent', user: 'Julep user', task: 'Julep task', execution: 'Julep execution' };
  return html`<${Page} title=${View && id ? titles[kind] : 'Julep'}>
    <div class="split">
      <div class="main-col">
        ${View && id ? html`<p><a href="#/julep">← Julep</a></p><${View} key=${kind + id} id=${id} />` : html`<${Overview} />`}
      </div>
      <aside class="side">
        <section class="card" aria-labelledby="julep-about-h">
          <h2 id="julep-about-h">About</h2>
          <p>Julep's API for its SDKs at <code>/julep</code>: agents, users, docs, tasks and their executions, read
            here with your key. Create them with a Julep SDK (<code>baseURL: <span class="id">${location.origin}/julep</span></code>) or
            as the README shows.</p>
        </section>
      </aside>
    </div>
  <//>`;
}

function Overview() {
  const { key } = useSession();
  const d = useLoad(async () => {
    const [agents, users] = await Promise.all([items(key, '/agents'), items(key, '/users')]);
    return { agents, users };
  }, [key]);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<${Loading} what="Julep" />`;
  return html`<div>
    <h2>Agents</h2>
    ${d.data.agents.length ? html`<table class="grid" id="julep-agents"><caption class="sr-only">Julep agents</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Model</th><th scope="col">About</th><th scope="col">Created</th></tr></thead>
      <tbody>${d.data.agents.map((a) => html`<tr data-id=${a.id}><td><a href=${'#/julep/agent/' + a.id}>${a.name || a.id}</a></td>
        <td>${a.model || html`<span class="muted">default</span>`}</td><td>${a.about || ''}</td><td>${fmtTime(a.created_at)}</td></tr>`)}</tbody>
    </table>` : html`<p class="muted">No Julep agents yet.</p>`}
    <h2>Users</h2>
    ${d.data.users.length ? html`<table class="grid" id="julep-users"><caption class="sr-only">Julep users</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">About</th><th scope="col">Created</th></tr></thead>
      <tbody>${d.data.users.map((u) => html`<tr data-id=${u.id}><td><a href=${'#/julep/user/' + u.id}>${u.name || u.id}</a></td>
        <td>${u.about || ''}</td><td>${fmtTime(u.created_at)}</td></tr>`)}</tbody>
    </table>` : html`<p class="muted">No Julep users yet.</p>`}
  </div>`;
}

function Docs({ docs }) {
  if (!docs.length) return html`<p class="muted">No docs.</p>`;
  return html`<ul class="plain docs">${docs.map((d) => html`<li><strong>${d.title || d.id}</strong>
    <span class="muted">${d.modality || 'text'} · ${fmtTime(d.created_at)}</span>
    <details><summary>Content</summary><${Value} v=${Array.isArray(d.content) ? d.content.join('\n\n') : d.content} /></details></li>`)}</ul>`;
}

function AgentView({ id }) {
  const { key } = useSession();
  const d = useLoad(async () => {
    const base = '/agents/' + enc(id);
    const [agent, tools, docs, tasks] = await Promise.all([rest(key, 'GET', J + base), items(key, base + '/tools'),
      items(key, base + '/docs'), items(key, base + '/tasks')]);
    return { agent, tools, docs, tasks };
  }, [key, id]);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<${Loading} what="the agent" />`;
  const { agent: a, tools, docs, tasks } = d.data;
  return html`<article class="julep-agent">
    <h2>${a.name || a.id}</h2>
    ${a.about ? html`<p>${a.about}</p>` : null}
    <dl class="kv">
      <div><dt>ID</dt><dd><code class="id">${a.id}</code></dd></div>
      <div><dt>Model</dt><dd>${a.model || html`<span class="muted">the platform's default</span>`}</dd></div>
      <div><dt>Instructions</dt><dd><${Value} v=${a.instructions} /></dd></div>
      <div><dt>Updated</dt><dd>${fmtTime(a.updated_at)}</dd></div>
    </dl>
    <h3>Tasks</h3>
    ${tasks.length ? html`<ul class="plain" id="julep-tasks">${tasks.map((t) => html`<li><a href=${'#/julep/task/' + t.id}>${t.name || t.id}</a>
      <span class="muted">${(t.main || []).length} steps · ${fmtTime(t.created_at)}</span></li>`)}</ul>` : html`<p class="muted">No tasks.</p>`}
    <h3>Tools</h3>
    ${tools.length ? html`<ul class="plain">${tools.map((t) => html`<li><code>${t.name}</code> <span class="badge">${t.type}</span>
      ${t.description ? html`<span class="muted">${t.description}</span>` : null}</li>`)}</ul>` : html`<p class="muted">No tools.</p>`}
    <h3>Docs</h3>
    <${Docs} docs=${docs} />
  </article>`;
}

function UserView({ id }) {
  const { key } = useSession();
  const d = useLoad(async () => {
    const [user, docs] = await Promise.all([rest(key, 'GET', J + '/users/' + enc(id)), items(key, '/users/' + enc(id) + '/docs')]);
    return { user, docs };
  }, [key, id]);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<${Loading} what="the user" />`;
  const u = d.data.user;
  return html`<article>
    <h2>${u.name || u.id}</h2>
    ${u.about ? html`<p>${u.about}</p>` : null}
    <dl class="kv"><div><dt>ID</dt><dd><code class="id">${u.id}</code></dd></div><div><dt>Created</dt><dd>${fmtTime(u.created_at)}</dd></div></dl>
    <h3>Docs</h3>
    <${Docs} docs=${d.data.docs} />
  </article>`;
}

function TaskView({ id }) {
  const { key } = useSession();
  const d = useLoad(async () => {
    const [task, executions] = await Promise.all([rest(key, 'GET', J + '/tasks/' + enc(id)), items(key, '/tasks/' + enc(id) + '/executions')]);
    return { task, executions };
  }, [key, id]);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<${Loading} what="the task" />`;
  const t = d.data.task;
  return html`<article>
    <h2>${t.name || t.id}</h2>
    ${t.description ? html`<p>${t.description}</p>` : null}
    <p class="muted">Agent <a href=${'#/julep/agent/' + t.agent_id}><code class="id">${t.agent_id}</code></a> · ${fmtTime(t.created_at)}</p>
    <h3>Executions</h3>
    ${d.data.executions.length ? html`<table class="grid" id="julep-executions"><caption class="sr-only">Executions of this task</caption>
      <thead><tr><th scope="col">Execution</th><th scope="col">Status</th><th scope="col">Transitions</th><th scope="col">Started</th><th scope="col">Updated</th></tr></thead>
      <tbody>${d.data.executions.map((e) => html`<tr><td><a href=${'#/julep/execution/' + e.id}><code class="id">${e.id}</code></a></td>
        <td><span class=${'badge status-' + e.status}>${e.status}</span></td><td>${e.transition_count ?? ''}</td>
        <td>${fmtTime(e.created_at)}</td><td>${fmtTime(e.updated_at)}</td></tr>`)}</tbody>
    </table>` : html`<p class="muted">No executions.</p>`}
    <h3>Steps (main)</h3>
    <ol class="steps">${(t.main || []).map((s) => html`<li><${Value} v=${s} /></li>`)}</ol>
    ${t.input_schema ? html`<h3>Input schema</h3><${KeyValues} data=${t.input_schema} />` : null}
  </article>`;
}

function ExecutionView({ id }) {
  const { key } = useSession();
  const d = useLoad(async () => {
    const [execution, transitions] = await Promise.all([rest(key, 'GET', J + '/executions/' + enc(id)),
      items(key, '/executions/' + enc(id) + '/transitions?direction=asc')]);
    return { execution, transitions: [...transitions].sort((a, b) => Date.parse(a.created_at) - Date.parse(b.created_at)) };
  }, [key, id]);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<${Loading} what="the execution" />`;
  const e = d.data.execution;
  return html`<article>
    <h2><code class="id">${e.id}</code> <span class=${'badge status-' + e.status} id="julep-execution-status">${e.status}</span></h2>
    <p class="muted">Task <a href=${'#/julep/task/' + e.task_id}><code class="id">${e.task_id}</code></a> · started ${fmtTime(e.created_at)} · updated ${fmtTime(e.updated_at)}</p>
    <p class="row"><button type="button" onClick=${d.reload}>Refresh</button></p>
    <dl class="kv">
      <div><dt>Input</dt><dd><${Value} v=${e.input} /></dd></div>
      <div><dt>Output</dt><dd><${Value} v=${e.output} /></dd></div>
      ${e.error ? html`<div><dt>Error</dt><dd class="failed">${e.error}</dd></div>` : null}
    </dl>
    <h3>Transitions</h3>
    <ol class="events" id="julep-transitions">${d.data.transitions.map((t) => html`<li class="event" data-type=${t.type}>
      <div class="ev-head"><span class="type">${t.type}</span>
        <span class="muted">${t.current ? `${t.current.workflow} step ${t.current.step}` : ''}${t.next ? ` → step ${t.next.step}` : ''}${t.metadata && t.metadata.step_type ? ` · ${t.metadata.step_type}` : ''}</span>
        <span class="muted">${fmtTime(t.created_at)}</span></div>
      <div class="ev-body"><${Value} v=${t.output} /></div></li>`)}</ol>
    ${d.data.transitions.length ? null : html`<p class="muted">No transitions yet.</p>`}
  </article>`;
}
