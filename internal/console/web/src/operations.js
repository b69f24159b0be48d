// Operations: the node's health and projections, accounts and keys, usage against quotas, the dead-letter queue.
// Everything but one's own keys needs an admin key.
import { useState } from 'preact/hooks';
import { health, rest } from './api.js';
import { TwoStep } from './agents.js';
import { CopyField, ErrorBox, fmtTime, html, Loading, Page, useAction, useLoad, useSession } from './ui.js';

export function Operations({ args }) {
  const { me } = useSession();
  const account = args[0] === 'account' ? args[1] : '';
  if (!me.admin) {
    return html`<${Page} title="Operations">
      <p>Operations (accounts, usage, projections, the dead-letter queue) need an admin key. You are signed
        in as <strong>${me.username}</strong> (account <code>${me.account_id}</code>). Your own keys:</p>
      <${Keys} account=${me.account_id} own=${true} />
    <//>`;
  }
  return html`<${Page} title="Operations">
    <div class="grid2">
      <${Health} />
      <${Projections} />
    </div>
    <${Accounts} selected=${account} />
    ${account ? html`<${Keys} key=${account} account=${account} own=${account === me.account_id} />` : null}
    <${DeadLetters} />
  <//>`;
}

function Health() {
  const h = useLoad(health, []);
  return html`<section class="card" aria-labelledby="health-h">
    <h2 id="health-h">Node health</h2>
    ${h.data ? html`<p id="node-ready" class=${h.data.ready ? 'ok' : 'error'}>${h.data.ready ? 'Ready' : 'Not ready'}${h.data.status.reason ? `: ${h.data.status.reason}` : ''}</p>` : html`<${Loading} />`}
    ${h.data && h.data.status.code_interpreter ? html`<p id="code-interpreter" class=${h.data.status.code_interpreter.available ? 'ok' : 'warning'}>
      code_interpreter: ${h.data.status.code_interpreter.available ? 'available' : `unavailable: ${h.data.status.code_interpreter.reason || 'no reason given'}`}</p>` : null}
    <${ErrorBox} error=${h.error} />
    <button type="button" onClick=${h.reload}>Check again</button>
  </section>`;
}

function Projections() {
  const { key } = useSession();
  const p = useLoad(() => rest(key, 'GET', '/admin/projections'), [key]);
  return html`<section class="card" aria-labelledby="proj-h">
    <h2 id="proj-h">Projections</h2>
    <${ErrorBox} error=${p.error} />
    ${p.data ? html`<table class="grid" id="projections"><caption class="sr-only">Read models and how far behind the log they are</caption>
      <thead><tr><th scope="col">Read model</th><th scope="col">Applied up to</th><th scope="col">Lag (events)</th><th scope="col">Generation</th><th scope="col">Leader</th></tr></thead>
      <tbody>${p.data.projections.map((s) => html`<tr><td>${s.name}</td><td>${s.applied_sequence}</td>
        <td class=${s.pending ? 'warn' : 'ok'}>${s.pending}</td><td>${s.generation}</td><td>${s.leader || html`<span class="muted">none</span>`}</td></tr>`)}</tbody>
    </table>` : html`<${Loading} />`}
    <button type="button" onClick=${p.reload}>Refresh</button>
  </section>`;
}

function Accounts({ selected }) {
  const { key } = useSession();
  const list = useLoad(async () => {
    const [a, u] = await Promise.all([rest(key, 'GET', '/admin/accounts'), rest(key, 'GET', '/admin/usage')]);
    const usage = new Map(u.accounts.map((x) => [x.account_id, x]));
    return { day: u.day, accounts: a.accounts.map((x) => ({ ...x, usage: usage.get(x.id) })) };
  }, [key]);
  const [f, setF] = useState({ name: '', limit: '' });
  const create = useAction(async () => {
    const body = { name: f.name.trim() };
    if (f.limit) body.daily_query_limit = Number(f.limit);
    const k = await rest(key, 'POST', '/admin/accounts', body);
    setF({ name: '', limit: '' });
    list.reload();
    return k;
  });
  return html`<section class="card" aria-labelledby="acct-h">
    <h2 id="acct-h">Accounts and usage${list.data ? ` (${list.data.day}, UTC)` : ''}</h2>
    <${ErrorBox} error=${list.error} />
    ${list.data ? html`<table class="grid" id="accounts"><caption class="sr-only">Accounts, their daily query use against their quota, and their keys</caption>
      <thead><tr><th scope="col">Account</th><th scope="col">Queries today / quota</th><th scope="col">Requests per minute per key</th><th scope="col">Keys</th><th scope="col">Created</th></tr></thead>
      <tbody>${list.data.accounts.map((a) => {
        const u = a.usage || {};
        const live = a.keys.filter((k) => !k.revoked_at).length;
        return html`<tr class=${a.id === selected ? 'current' : ''}><td><a href=${'#/operations/account/' + a.id} aria-current=${a.id === selected ? 'true' : undefined}>${a.name}</a>${a.admin ? html` <span class="badge">admin</span>` : null} <code class="muted">${a.id}</code></td>
          <td><meter min="0" max=${u.daily_query_limit || 1} value=${u.daily_used_queries || 0} aria-label=${`${a.name}: ${u.daily_used_queries} of ${u.daily_query_limit} queries today`}></meter> ${u.daily_used_queries} / ${u.daily_query_limit}</td>
          <td>${a.requests_per_minute || html`<span class="muted">default</span>`}</td><td>${live}${a.keys.length > live ? html` <span class="muted">(+${a.keys.length - live} revoked)</span>` : null}</td><td>${fmtTime(a.created_at)}</td></tr>`;
      })}</tbody></table>` : html`<${Loading} what="accounts" />`}
    <form class="inline" onSubmit=${(e) => { e.preventDefault(); create.run(); }}>
      <label for="new-account">New account</label>
      <input id="new-account" required value=${f.name} onInput=${(e) => setF({ ...f, name: e.target.value })} />
      <label for="new-limit">Daily query quota</label>
      <input id="new-limit" type="number" min="1" placeholder="default" value=${f.limit} onInput=${(e) => setF({ ...f, limit: e.target.value })} />
      <button type="submit" disabled=${create.busy}>Create account</button>
    </form>
    <${ErrorBox} error=${create.error} />
    ${create.done ? html`<div role="status"><p>Created account <code>${create.done.account_id}</code>. Its key is shown this once:</p>
      <${CopyField} id="new-account-key" label="API key of the new account" value=${create.done.key} /></div>` : null}
  </section>`;
}

function Keys({ account, own }) {
  const { key, me } = useSession();
  const q = own ? '' : '?account=' + encodeURIComponent(account);
  const keys = useLoad(() => rest(key, 'GET', '/admin/keys' + q), [key, account]);
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const k = await rest(key, 'POST', '/admin/keys' + q, { name: name.trim() });
    setName('');
    keys.reload();
    return k;
  });
  const revoke = useAction(async (id) => {
    await rest(key, 'DELETE', '/admin/keys/' + encodeURIComponent(id) + q);
    keys.reload();
    // A revoked key's value is no use to anyone: it leaves the screen (and its Copy button with it).
    if (create.done && create.done.key_id === id) {
      create.reset();
      return `Revoked ${id}; its value is cleared from this page.`;
    }
    return `Revoked ${id}.`;
  });
  return html`<section class="card" aria-labelledby="keys-h">
    <h2 id="keys-h">Keys of ${own ? 'your account' : keys.data && keys.data.name ? keys.data.name : html`<code>${account}</code>`}</h2>
    <${ErrorBox} error=${keys.error} />
    ${keys.data ? html`<table class="grid" id="keys"><caption class="sr-only">Keys (stored as hashes: only a hint of each is known)</caption>
      <thead><tr><th scope="col">Key</th><th scope="col">Name</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
      <tbody>${keys.data.keys.map((k) => html`<tr data-key-id=${k.id}><td><code>${k.id}</code> <span class="muted">${k.hint}</span></td><td>${k.name || ''}</td><td>${fmtTime(k.created_at)}</td>
        <td>${k.revoked_at ? html`<span class="badge">revoked ${fmtTime(k.revoked_at)}</span>`
          : k.id === me.key_id ? html`<span class="muted">this console's key</span>`
          : html`<${TwoStep} label=${'Revoke ' + k.id} confirm=${`Revoke ${k.id}? Clients using it stop working.`} onConfirm=${() => revoke.run(k.id)} busy=${revoke.busy} />`}</td></tr>`)}</tbody>
    </table>` : html`<${Loading} what="keys" />`}
    <p aria-live="polite" class="muted">${revoke.done || ''}</p>
    <${ErrorBox} error=${revoke.error} />
    <form class="inline" onSubmit=${(e) => { e.preventDefault(); create.run(); }}>
      <label for="new-key">New key named</label>
      <input id="new-key" value=${name} onInput=${(e) => setName(e.target.value)} placeholder="laptop" />
      <button type="submit" disabled=${create.busy}>Issue key</button>
    </form>
    <${ErrorBox} error=${create.error} />
    ${create.done ? html`<div role="status"><${CopyField} id="new-key-value" label=${`Key ${create.done.key_id} (shown this once)`} value=${create.done.key} /></div>` : null}
  </section>`;
}

function DeadLetters() {
  const { key } = useSession();
  const dlq = useLoad(() => rest(key, 'GET', '/admin/dlq'), [key]);
  const redrive = useAction(async (seq) => {
    const r = await rest(key, 'POST', `/admin/dlq/${seq}/redrive`);
    dlq.reload();
    return `Handed event ${r.redriven.event_seq} back to ${r.redriven.handler}.`;
  });
  return html`<section class="card" aria-labelledby="dlq-h">
    <h2 id="dlq-h">Dead-letter queue</h2>
    <p class="muted">Events a handler gave up on after its retries. Re-drive one when its cause is fixed.</p>
    <${ErrorBox} error=${dlq.error || redrive.error} />
    <p aria-live="polite">${redrive.done || ''}</p>
    ${dlq.data ? (dlq.data.dead_letters.length ? html`<table class="grid" id="dlq"><caption class="sr-only">Dead letters</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Handler</th><th scope="col">Event</th><th scope="col">Why</th><th scope="col">Deliveries</th><th scope="col">When</th><th scope="col"></th></tr></thead>
      <tbody>${dlq.data.dead_letters.map((d) => html`<tr><td>${d.seq}</td><td>${d.handler}</td><td>${d.event_type} <code class="muted">${d.aggregate}</code> (seq ${d.event_seq})</td>
        <td>${d.reason}</td><td>${d.deliveries}</td><td>${fmtTime(d.poisoned_at)}</td>
        <td><button type="button" onClick=${() => redrive.run(d.seq)} disabled=${redrive.busy}>Re-drive ${d.seq}</button></td></tr>`)}</tbody>
    </table>` : html`<p id="dlq-empty">Empty: every handler kept up.</p>`) : html`<${Loading} />`}
    <button type="button" onClick=${dlq.reload}>Refresh</button>
  </section>`;
}
