// Vector stores (the /v1 face, read only, plus search): the stores of the key's account, a store's files with their
// status, and a search of it as the file_search tool would run it. Routes: #/vector-stores, #/vector-stores/ID.
import { useState } from 'preact/hooks';
import { rest } from './api.js';
import { ErrorBox, fmtTime, html, KeyValues, Loading, Page, useAction, useLoad, useSession } from './ui.js';

const enc = encodeURIComponent;

const bytes = (n) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n || 0} B`);

export function VectorStores({ args }) {
  const { key } = useSession();
  const id = args[0] || '';
  const list = useLoad(() => rest(key, 'GET', '/v1/vector_stores?limit=100'), [key]);
  return html`<${Page} title=${id ? 'Vector store' : 'Vector stores'}>
    <div class="split">
      <div class="main-col">
        ${id ? html`<${Store} key=${id} id=${id} />` : html`<${StoreList} list=${list} />`}
      </div>
      <aside class="side" aria-label="Vector stores">
        <h2>Stores</h2>
        <${ErrorBox} error=${list.error} />
        ${list.data ? html`<ul class="sessions">${list.data.data.map((s) => html`<li class=${s.id === id ? 'current' : ''}>
          <a class="session-title" href=${'#/vector-stores/' + s.id} aria-current=${s.id === id ? 'page' : undefined}>${s.name || s.id}</a>
          <span class="muted">${s.file_counts.total} files · <code class="id">${s.id}</code></span></li>`)}
          ${list.data.data.length ? null : html`<li class="muted">None yet: create one with any OpenAI SDK pointed at /v1.</li>`}</ul>` : html`<${Loading} />`}
      </aside>
    </div>
  <//>`;
}

function StoreList({ list }) {
  if (list.error) return null;
  if (!list.data) return html`<${Loading} what="vector stores" />`;
  if (!list.data.data.length) return html`<p>No vector stores yet. They hold files for the <code>file_search</code> tool of assistants.</p>`;
  return html`<table class="grid" id="vector-stores"><caption class="sr-only">Vector stores</caption>
    <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Files (done / all)</th><th scope="col">Size</th><th scope="col">Created</th></tr></thead>
    <tbody>${list.data.data.map((s) => html`<tr><td><a href=${'#/vector-stores/' + s.id}>${s.name || s.id}</a></td>
      <td><span class=${'badge status-' + s.status}>${s.status}</span></td><td>${s.file_counts.completed} / ${s.file_counts.total}</td>
      <td>${bytes(s.usage_bytes)}</td><td>${fmtTime(s.created_at)}</td></tr>`)}</tbody>
  </table>`;
}

function Store({ id }) {
  const { key } = useSession();
  const d = useLoad(async () => {
    const base = '/v1/vector_stores/' + enc(id);
    const [store, files, all] = await Promise.all([rest(key, 'GET', base), rest(key, 'GET', base + '/files?limit=100'), rest(key, 'GET', '/v1/files?limit=1000')]);
    const names = new Map(all.data.map((f) => [f.id, f.filename]));
    return { store, files: files.data.map((f) => ({ ...f, filename: names.get(f.id) })) };
  }, [key, id]);
  const [query, setQuery] = useState('');
  const search = useAction(async (q) => (await rest(key, 'POST', `/v1/vector_stores/${enc(id)}/search`, { query: q, max_num_results: 5 })).data);
  if (d.error) return html`<${ErrorBox} error=${d.error} />`;
  if (!d.data) return html`<${Loading} what="the vector store" />`;
  const s = d.data.store;
  return html`<article>
    <h2>${s.name || s.id} <span class=${'badge status-' + s.status}>${s.status}</span></h2>
    <dl class="kv">
      <div><dt>ID</dt><dd><code class="id">${s.id}</code></dd></div>
      <div><dt>Size</dt><dd>${bytes(s.usage_bytes)}</dd></div>
      <div><dt>Created</dt><dd>${fmtTime(s.created_at)}</dd></div>
      ${s.expires_after ? html`<div><dt>Expires</dt><dd>${s.expires_at ? fmtTime(s.expires_at) : ''} (${s.expires_after.days} days after ${s.expires_after.anchor})</dd></div>` : null}
      ${Object.keys(s.metadata || {}).length ? html`<div><dt>Metadata</dt><dd><${KeyValues} data=${s.metadata} /></dd></div>` : null}
    </dl>
    <p class="row"><button type="button" onClick=${d.reload}>Refresh</button></p>
    <h3>Files</h3>
    ${d.data.files.length ? html`<table class="grid" id="vector-store-files"><caption class="sr-only">Files in this store</caption>
      <thead><tr><th scope="col">File</th><th scope="col">Status</th><th scope="col">Size indexed</th><th scope="col">Added</th></tr></thead>
      <tbody>${d.data.files.map((f) => html`<tr><td>${f.filename || ''} <code class="id muted">${f.id}</code></td>
        <td><span class=${'badge status-' + f.status}>${f.status}</span>${f.last_error ? html` <span class="failed">${f.last_error.message}</span>` : null}</td>
        <td>${bytes(f.usage_bytes)}</td><td>${fmtTime(f.created_at)}</td></tr>`)}</tbody>
    </table>` : html`<p class="muted">No files.</p>`}
    <h3>Search</h3>
    <form class="row" onSubmit=${(e) => { e.preventDefault(); if (query.trim()) search.run(query.trim()); }}>
      <label for="vs-query" class="sr-only">Search this store</label>
      <input id="vs-query" value=${query} onInput=${(e) => setQuery(e.target.value)} placeholder="What the file_search tool would be asked" />
      <button type="submit" disabled=${search.busy}>Search</button>
    </form>
    <${ErrorBox} error=${search.error} />
    ${search.done ? html`<ol class="plain" id="vs-results">${search.done.map((r) => html`<li><strong>${r.filename}</strong> <span class="num muted">${r.score.toFixed(3)}</span>
      <pre class="text">${(r.content || []).map((c) => c.text).join('\n')}</pre></li>`)}
      ${search.done.length ? null : html`<li class="muted">Nothing found.</li>`}</ol>` : null}
  </article>`;
}
