// Responses (the OpenAI face, /v1): the account's conversations (GET /v1/conversations, Contrail's extension: OpenAI
// has no list), a conversation's items in order, and a response opened by its ID with its output and usage. A client
// that keeps its session as a conversation (the Agents SDK's OpenAIConversationsSession) is found here.
import { useState } from 'preact/hooks';
import { rest } from './api.js';
import { ErrorBox, fmtTime, html, KeyValues, Loading, Page, useLoad, useSession, Value } from './ui.js';

const PAGE = 20;

export function Responses({ args }) {
  const [kind, id] = args;
  const conversation = kind === 'conversation' ? id : '';
  const response = kind === 'response' ? id : '';
  const title = conversation ? `Conversation · ${conversation}` : response ? `Response · ${response}` : 'Responses';
  return html`<${Page} title=${title}>
    <div class="split">
      <aside class="side" aria-label="Conversations">
        <${OpenResponse} current=${response} />
        <${Conversations} current=${conversation} />
      </aside>
      <div class="main-col">
        ${conversation ? html`<${Conversation} key=${conversation} id=${conversation} />`
          : response ? html`<${Response} key=${response} id=${response} />`
          : html`<p>Pick a conversation to see its items, or open a response by its ID. Conversations are made with
            <code>POST /v1/conversations</code> (any OpenAI SDK pointed at /v1, or the Agents SDK's
            <code>OpenAIConversationsSession</code>); a response names one with <code>conversation</code>.</p>`}
      </div>
    </div>
  <//>`;
}

// OpenResponse is the box that opens a response by its ID.
function OpenResponse({ current }) {
  const [id, setId] = useState(current || '');
  const open = (e) => {
    e.preventDefault();
    const v = id.trim();
    if (v) location.hash = '#/responses/response/' + encodeURIComponent(v);
  };
  return html`<form class="stack" onSubmit=${open}>
    <label for="response-id">Open a response by its ID</label>
    <div class="row"><input id="response-id" placeholder="resp_…" autocomplete="off" spellcheck="false" required value=${id}
      onInput=${(e) => setId(e.target.value)} /><button type="submit">Open</button></div>
  </form>`;
}

// Conversations lists the account's conversations newest first, a page at a time: each by its first words and ID.
function Conversations({ current }) {
  const { key } = useSession();
  const [pages, setPages] = useState([]);
  const [more, setMore] = useState({ busy: false, error: null });
  const first = useLoad(async () => {
    const p = await rest(key, 'GET', `/v1/conversations?limit=${PAGE}`);
    setPages([]);
    return p;
  }, [key]);
  const all = first.data ? [first.data, ...pages] : [];
  const last = all[all.length - 1];
  const loadMore = async () => {
    setMore({ busy: true, error: null });
    try {
      const p = await rest(key, 'GET', `/v1/conversations?limit=${PAGE}&after=${encodeURIComponent(last.last_id)}`);
      setPages((ps) => [...ps, p]);
      setMore({ busy: false, error: null });
    } catch (error) {
      setMore({ busy: false, error });
    }
  };
  const list = all.flatMap((p) => p.data);
  return html`<h2>Conversations</h2>
    <${ErrorBox} error=${first.error} />
    ${first.data ? html`<ul class="sessions" id="conversations">${list.map((c) => html`<li class=${c.id === current ? 'current' : ''} data-id=${c.id}>
      <a class="session-title" href=${'#/responses/conversation/' + c.id} aria-current=${c.id === current ? 'page' : undefined}>${c.preview || 'No user message'}</a>
      <code class="id">${c.id}</code> <span class="muted">${fmtTime(c.created_at)}</span></li>`)}
      ${list.length ? null : html`<li class="muted">No conversations yet.</li>`}</ul>
      ${last && last.has_more ? html`<p class="row"><button type="button" disabled=${more.busy} onClick=${loadMore}>${more.busy ? 'Loading…' : 'More conversations'}</button></p>` : null}
      <${ErrorBox} error=${more.error} />
      <p class="row"><button type="button" onClick=${first.reload}>Refresh list</button></p>` : html`<${Loading} what="conversations" />`}`;
}

// allPages reads a list to its end (at most 1000 items: a console shows no more at once).
async function allPages(key, path) {
  const out = [];
  let after = '';
  for (let i = 0; i < 10; i++) {
    const p = await rest(key, 'GET', path + (after ? '&after=' + encodeURIComponent(after) : ''));
    out.push(...p.data);
    if (!p.has_more || !p.last_id) break;
    after = p.last_id;
  }
  return out;
}

const INCLUDE = '&include[]=code_interpreter_call.outputs&include[]=file_search_call.results';

function Conversation({ id }) {
  const { key } = useSession();
  const c = useLoad(async () => {
    const base = '/v1/conversations/' + encodeURIComponent(id);
    const [conv, items] = await Promise.all([rest(key, 'GET', base), allPages(key, base + '/items?order=asc&limit=100' + INCLUDE)]);
    return { conv, items };
  }, [key, id]);
  if (c.error) return html`<${ErrorBox} error=${c.error} />`;
  if (!c.data) return html`<${Loading} what="the conversation" />`;
  const { conv, items } = c.data;
  return html`<div>
    <p class="row"><button type="button" onClick=${c.reload}>Refresh</button></p>
    <${KeyValues} data=${{ id: conv.id, created: fmtTime(conv.created_at), metadata: Object.keys(conv.metadata || {}).length ? conv.metadata : null }} />
    <h2>Items</h2>
    <${Items} items=${items} empty="No items." />
  </div>`;
}

function Response({ id }) {
  const { key } = useSession();
  const [showInput, setShowInput] = useState(false);
  const r = useLoad(() => rest(key, 'GET', '/v1/responses/' + encodeURIComponent(id)), [key, id]);
  const input = useLoad(
    () => (showInput ? allPages(key, `/v1/responses/${encodeURIComponent(id)}/input_items?order=asc&limit=100`) : Promise.resolve(null)),
    [key, id, showInput],
  );
  if (r.error) return html`<${ErrorBox} error=${r.error} />`;
  if (!r.data) return html`<${Loading} what="the response" />`;
  const resp = r.data;
  const conv = resp.conversation && resp.conversation.id;
  return html`<article class="card" id="response">
    <h2><code class="id">${resp.id}</code> <span class=${'badge status-' + resp.status} id="response-status">${resp.status}</span></h2>
    <p class="row"><button type="button" onClick=${r.reload}>Refresh</button></p>
    <${KeyValues} data=${{ model: resp.model, created: fmtTime(resp.created_at), ...(resp.background ? { background: 'yes' } : {}) }} />
    ${conv ? html`<p>In conversation <a href=${'#/responses/conversation/' + conv}><code class="id">${conv}</code></a></p>` : null}
    ${resp.previous_response_id ? html`<p>After response <a href=${'#/responses/response/' + resp.previous_response_id}><code class="id">${resp.previous_response_id}</code></a></p>` : null}
    ${resp.error ? html`<p class="error">${resp.error.code}: ${resp.error.message}</p>` : null}
    ${resp.incomplete_details ? html`<p class="warning">Incomplete: ${resp.incomplete_details.reason}</p>` : null}
    ${resp.instructions ? html`<details><summary>Instructions</summary><pre>${typeof resp.instructions === 'string' ? resp.instructions : JSON.stringify(resp.instructions, null, 2)}</pre></details>` : null}
    <h3>Output</h3>
    <${Items} items=${resp.output || []} empty="No output." />
    <h3>Usage</h3>
    <div id="response-usage">${resp.usage ? html`<${KeyValues} data=${{ input_tokens: resp.usage.input_tokens, output_tokens: resp.usage.output_tokens, total_tokens: resp.usage.total_tokens,
      cached_tokens: resp.usage.input_tokens_details && resp.usage.input_tokens_details.cached_tokens, reasoning_tokens: resp.usage.output_tokens_details && resp.usage.output_tokens_details.reasoning_tokens }} />` : html`<span class="muted">not yet known</span>`}</div>
    <button type="button" aria-expanded=${showInput} onClick=${() => setShowInput(!showInput)}>${showInput ? 'Hide input items' : 'Show input items'}</button>
    ${showInput && input.error ? html`<${ErrorBox} error=${input.error} />` : null}
    ${showInput && input.data ? html`<${Items} items=${input.data} empty="No input items." />` : null}
  </article>`;
}

// Items shows items in order: messages as in Chat, tool calls summarised, a function call's output named by its call.
function Items({ items, empty }) {
  const calls = {};
  for (const it of items) if (it.type === 'function_call') calls[it.call_id] = it.name;
  return html`<ol class="messages compact items">${items.map((it) => html`<${Item} key=${it.id} it=${it} calls=${calls} />`)}
    ${items.length ? null : html`<li class="muted">${empty}</li>`}</ol>`;
}

const partText = (c) => {
  switch (c.type) {
    case 'input_text':
    case 'output_text':
    case 'text':
    case 'summary_text':
      return c.text;
    case 'refusal':
      return `[refused: ${c.refusal}]`;
    case 'input_image':
      return `[image${c.file_id ? ' ' + c.file_id : ''}]`;
    case 'input_file':
      return `[file ${c.filename || c.file_id || ''}]`;
  }
  return `[${c.type}]`;
};

// outputText is a function call's output as text: a string, or its parts.
const outputText = (o) => (typeof o === 'string' ? o : Array.isArray(o) ? o.map(partText).join('\n') : JSON.stringify(o));

function Item({ it, calls }) {
  const head = (label, extra) => html`<div class="meta"><strong>${label}</strong>${extra ? html` · ${extra}` : null}${it.status && it.status !== 'completed' ? html` · <span class=${'badge status-' + it.status}>${it.status}</span>` : null}</div>`;
  const li = (cls, body) => html`<li class=${'msg ' + cls} data-type=${it.type} data-id=${it.id}>${body}</li>`;
  switch (it.type) {
    case 'message':
      return li(it.role === 'assistant' ? 'response' : 'query', html`${head(it.role)}<div class="body">${(it.content || []).map(partText).join('\n')}</div>`);
    case 'function_call':
      return li('tool', html`${head('Function call', html`<code>${it.call_id}</code>`)}<code class="args">${it.name}(${it.arguments})</code>`);
    case 'function_call_output':
      return li('tool', html`${head('Function output', html`${calls[it.call_id] ? html`of <code>${calls[it.call_id]}</code> ` : null}<code>${it.call_id}</code>`)}<pre class="text">${outputText(it.output)}</pre>`);
    case 'file_search_call':
      return li('tool', html`${head('File search')}<p>${(it.queries || []).map((q) => `“${q}”`).join(', ') || html`<span class="muted">no queries</span>`}</p>
        ${it.results ? html`<p class="muted">${it.results.length} results${it.results.length ? ': ' + [...new Set(it.results.map((r) => r.filename || r.file_id))].join(', ') : ''}</p>` : null}`);
    case 'code_interpreter_call':
      return li('tool', html`${head('Code interpreter', it.container_id ? html`<code>${it.container_id}</code>` : null)}<pre>${it.code}</pre>
        ${(it.outputs || []).map((o) => (o.type === 'logs' ? html`<pre class="text">${o.logs}</pre>` : html`<p class="muted">image output</p>`))}`);
    case 'mcp_list_tools':
      return li('tool', html`${head('MCP tools', it.server_label)}<p>${(it.tools || []).map((t) => t.name).join(', ') || html`<span class="muted">none</span>`}</p>
        ${it.error ? html`<p class="error">${it.error}</p>` : null}`);
    case 'mcp_call':
      return li('tool', html`${head('MCP call', it.server_label)}<code class="args">${it.name}(${it.arguments})</code>
        ${it.error ? html`<p class="error">${it.error}</p>` : it.output !== null && it.output !== undefined ? html`<pre class="text">${it.output}</pre>` : null}`);
    case 'mcp_approval_request':
      return li('tool', html`${head('MCP approval asked', it.server_label)}<code class="args">${it.name}(${it.arguments})</code>`);
    case 'mcp_approval_response':
      return li('tool', html`${head('MCP approval', it.approve ? 'approved' : 'denied')}<p class="muted">for <code>${it.approval_request_id}</code>${it.reason ? ` · ${it.reason}` : ''}</p>`);
    case 'reasoning':
      return li('tool', html`${head('Reasoning')}<div class="body">${(it.summary || []).map(partText).join('\n')}</div>`);
    case 'compaction':
      return li('tool', html`${head('Compacted history')}<p class="muted">the earlier items, summarised (sealed)</p>`);
  }
  return li('tool', html`${head(it.type)}<${Value} v=${it} />`);
}
