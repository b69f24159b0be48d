// Assistants (the OpenAI face, /v1): assistants, threads, a thread's messages, and its runs with their steps and
// the statuses they went through.
import { useState } from 'preact/hooks';
import { rest } from './api.js';
import { ErrorBox, fmtTime, html, KeyValues, Loading, Page, useLoad, useSession } from './ui.js';

export function Assistants({ args }) {
  const { key } = useSession();
  const thread = args[0] === 'thread' ? args[1] : '';
  const lists = useLoad(async () => {
    const [assistants, threads] = await Promise.all([rest(key, 'GET', '/v1/assistants?limit=100'), rest(key, 'GET', '/v1/threads?limit=100')]);
    return { assistants: assistants.data, threads: threads.data };
  }, [key]);
  const name = (id) => ((lists.data && lists.data.assistants.find((a) => a.id === id)) || {}).name || id;
  return html`<${Page} title=${thread ? `Thread · ${thread}` : 'Assistants'}>
    <${ErrorBox} error=${lists.error} />
    <div class="split">
      <aside class="side" aria-label="Assistants and threads">
        <h2>Assistants</h2>
        ${lists.data ? html`<ul class="plain">${lists.data.assistants.map((a) => html`<li><strong>${a.name || a.id}</strong> <span class="muted">${a.model}</span>
          <details><summary>Details</summary><${KeyValues} data=${{ id: a.id, instructions: a.instructions, tools: a.tools.map((t) => t.type), created: fmtTime(a.created_at) }} /></details></li>`)}
          ${lists.data.assistants.length ? null : html`<li class="muted">None yet: create one with any OpenAI SDK pointed at /v1.</li>`}</ul>` : html`<${Loading} />`}
        <h2>Threads</h2>
        ${lists.data ? html`<ul class="sessions">${lists.data.threads.map((t) => html`<li class=${t.id === thread ? 'current' : ''}>
          <a href=${'#/assistants/thread/' + t.id} aria-current=${t.id === thread ? 'page' : undefined}>${t.id}</a> <span class="muted">${fmtTime(t.created_at)}</span></li>`)}
          ${lists.data.threads.length ? null : html`<li class="muted">No threads yet.</li>`}</ul>` : null}
      </aside>
      <div class="main-col">
        ${thread ? html`<${Thread} key=${thread} id=${thread} name=${name} />` : html`<p>Pick a thread to see its messages and runs.</p>`}
      </div>
    </div>
  <//>`;
}

function Thread({ id, name }) {
  const { key } = useSession();
  const t = useLoad(async () => {
    const base = '/v1/threads/' + encodeURIComponent(id);
    const [messages, runs] = await Promise.all([rest(key, 'GET', base + '/messages?order=asc&limit=100'), rest(key, 'GET', base + '/runs?order=asc&limit=100')]);
    return { messages: messages.data, runs: runs.data };
  }, [key, id]);
  if (t.error) return html`<${ErrorBox} error=${t.error} />`;
  if (!t.data) return html`<${Loading} what="the thread" />`;
  return html`<div>
    <p class="row"><button type="button" onClick=${t.reload}>Refresh</button></p>
    <h2>Messages</h2>
    <ol class="messages">${t.data.messages.map((m) => html`<li class=${'msg ' + (m.role === 'user' ? 'query' : 'response')}>
      <div class="meta"><strong>${m.role === 'assistant' ? name(m.assistant_id) : m.role}</strong> · ${fmtTime(m.created_at)} · ${m.status}${m.run_id ? html` · run <code>${m.run_id}</code>` : null}</div>
      <div class="body">${m.content.map((c) => (c.type === 'text' ? c.text.value : html`<${KeyValues} data=${c} />`))}</div></li>`)}
      ${t.data.messages.length ? null : html`<li class="muted">No messages.</li>`}</ol>
    <h2>Runs</h2>
    ${t.data.runs.map((r) => html`<${Run} key=${r.id} run=${r} thread=${id} name=${name} />`)}
    ${t.data.runs.length ? null : html`<p class="muted">No runs.</p>`}
  </div>`;
}

// history lists the statuses a run went through, from the times the run records (created, started, and how it
// ended); a run that waited for tool outputs shows it by its steps.
function history(r) {
  const h = [['queued', r.created_at]];
  if (r.started_at) h.push(['in_progress', r.started_at]);
  if (r.status === 'requires_action') h.push(['requires_action', null]);
  if (r.status === 'cancelling') h.push(['cancelling', null]);
  if (r.cancelled_at) h.push(['cancelled', r.cancelled_at]);
  if (r.failed_at) h.push(['failed', r.failed_at]);
  if (r.completed_at) h.push(['completed', r.completed_at]);
  if (r.status === 'expired') h.push(['expired', r.expires_at]);
  if (r.status === 'incomplete') h.push(['incomplete', r.completed_at]);
  return h;
}

function Run({ run, thread, name }) {
  const { key } = useSession();
  const [open, setOpen] = useState(false);
  const steps = useLoad(
    () => (open ? rest(key, 'GET', `/v1/threads/${encodeURIComponent(thread)}/runs/${encodeURIComponent(run.id)}/steps?order=asc&limit=100`) : Promise.resolve(null)),
    [key, thread, run.id, open],
  );
  return html`<article class="card run">
    <h3><code>${run.id}</code> <span class=${'badge status-' + run.status}>${run.status}</span></h3>
    <p class="muted">${name(run.assistant_id)} · model ${run.model}${run.usage ? ` · ${run.usage.total_tokens} tokens` : ''}</p>
    ${run.last_error ? html`<p class="error">${run.last_error.code}: ${run.last_error.message}</p>` : null}
    <h4>Status history</h4>
    <ol class="history">${history(run).map(([s, at]) => html`<li><span class=${'badge status-' + s}>${s}</span> ${at ? fmtTime(at) : html`<span class="muted">now</span>`}</li>`)}</ol>
    <button type="button" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? 'Hide steps' : 'Show steps'}</button>
    ${open && steps.error ? html`<${ErrorBox} error=${steps.error} />` : null}
    ${open && steps.data ? html`<ol class="steps">${steps.data.data.map((s) => html`<li>
      <strong>${s.type === 'tool_calls' ? 'Tool calls' : 'Message'}</strong> <span class=${'badge status-' + s.status}>${s.status}</span>
      <span class="muted">${fmtTime(s.created_at)}${s.completed_at ? ` → ${fmtTime(s.completed_at)}` : ''}</span>
      <${StepDetails} d=${s.step_details} />
      ${s.last_error ? html`<p class="error">${s.last_error.message}</p>` : null}
    </li>`)}${steps.data.data.length ? null : html`<li class="muted">No steps.</li>`}</ol>` : null}
  </article>`;
}

function StepDetails({ d }) {
  if (!d) return null;
  if (d.type === 'message_creation') return html`<p class="muted">wrote message <code>${d.message_creation.message_id}</code></p>`;
  if (d.type === 'tool_calls') {
    return html`<ul>${d.tool_calls.map((c) => html`<li>${c.type === 'function'
      ? html`<code>${c.function.name}(${c.function.arguments})</code> → ${c.function.output === null || c.function.output === undefined ? html`<span class="muted">waiting for its output</span>` : html`<code>${c.function.output}</code>`}`
      : html`<${KeyValues} data=${c} />`}</li>`)}</ul>`;
  }
  return html`<${KeyValues} data=${d} />`;
}
