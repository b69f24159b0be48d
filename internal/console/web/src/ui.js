// Small pieces every page uses: the html tag, the signed-in context, loading data, errors, values.
import { createContext, h } from 'preact';
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { explain } from './api.js';

export const html = htm.bind(h);

// Session is who is signed in: {key, me: {account_id, username, admin, key_id}, subs: Subscriptions}.
export const Session = createContext(null);
export const useSession = () => useContext(Session);

// useLoad runs an async load when its deps change and keeps {data, error, loading, reload}. A result that
// arrives after the deps changed again is dropped.
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const gen = useRef(0);
  const reload = useCallback(() => {
    const mine = ++gen.current;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => mine === gen.current && setState({ data, error: null, loading: false }),
      (error) => mine === gen.current && setState({ data: null, error, loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload };
}

// useAction wraps a user action: {run, busy, error, done}; done holds what the last run returned.
export function useAction(action) {
  const [state, setState] = useState({ busy: false, error: null, done: null });
  const run = async (...args) => {
    setState({ busy: true, error: null, done: null });
    try {
      const done = await action(...args);
      setState({ busy: false, error: null, done });
      return done;
    } catch (error) {
      setState({ busy: false, error, done: null });
      return undefined;
    }
  };
  // reset forgets the last run's result: a secret it showed (a new key) that is no longer good.
  const reset = () => setState({ busy: false, error: null, done: null });
  return { ...state, run, reset };
}

export function ErrorBox({ error }) {
  if (!error) return null;
  const text = typeof error === 'string' ? error : explain(error);
  return html`<p class="error" role="alert">${text}</p>`;
}

export function Loading({ what }) {
  return html`<p class="muted" aria-live="polite">Loading ${what || ''}…</p>`;
}

// Page is a page's frame: its heading (focused when the page opens, so a keyboard or screen reader user starts
// there) and its content.
export function Page({ title, actions, children }) {
  const ref = useRef(null);
  useEffect(() => ref.current && ref.current.focus(), [title]);
  return html`<section class="page">
    <header class="page-head"><h1 tabindex="-1" ref=${ref}>${title}</h1>${actions ? html`<div class="actions">${actions}</div>` : null}</header>
    ${children}
  </section>`;
}

export const fmtTime = (t) => {
  if (t === null || t === undefined || t === '') return '';
  const d = typeof t === 'number' ? new Date(t * 1000) : new Date(t);
  return isNaN(d) ? String(t) : d.toLocaleString();
};

// offset says how long after a start something happened: +0.84s, +12ms, +2m03s.
export function offset(ms) {
  if (ms < 0) ms = 0;
  if (ms < 1000) return `+${Math.round(ms)}ms`;
  if (ms < 60000) return `+${(ms / 1000).toFixed(2)}s`;
  const m = Math.floor(ms / 60000);
  const s = Math.round((ms % 60000) / 1000);
  return `+${m}m${String(s).padStart(2, '0')}s`;
}

export function ScoreBar({ score, fits, label }) {
  const pct = Math.max(0, Math.min(1, score)) * 100;
  return html`<span class="score">
    <span class="bar" aria-hidden="true"><span class=${fits ? 'fill fits' : 'fill'} style=${{ width: pct.toFixed(1) + '%' }}></span></span>
    <span class="num">${score.toFixed(3)}</span>
    ${fits ? html`<span class="badge ok" title="above the router's threshold">fits</span>` : null}
    ${label ? html`<span class="sr-only">${label}</span>` : null}
  </span>`;
}

// Value shows any JSON value readably: strings as text (long ones in a block), arrays and objects as nested
// key/value lists.
export function Value({ v, depth = 0 }) {
  if (v === null || v === undefined) return html`<span class="muted">—</span>`;
  if (typeof v === 'string') {
    return v.includes('\n') || v.length > 120 ? html`<pre class="text">${v}</pre>` : html`<span class="text">${v}</span>`;
  }
  if (typeof v !== 'object') return html`<span class="text">${String(v)}</span>`;
  if (depth > 3) return html`<code>${JSON.stringify(v)}</code>`;
  if (Array.isArray(v)) {
    if (!v.length) return html`<span class="muted">none</span>`;
    return html`<ol class="kv-list">${v.map((x) => html`<li><${Value} v=${x} depth=${depth + 1} /></li>`)}</ol>`;
  }
  return html`<${KeyValues} data=${v} depth=${depth + 1} />`;
}

export function KeyValues({ data, depth = 0 }) {
  const keys = Object.keys(data || {});
  if (!keys.length) return html`<span class="muted">no data</span>`;
  return html`<dl class="kv">${keys.map((k) => html`<div><dt>${k}</dt><dd><${Value} v=${data[k]} depth=${depth} /></dd></div>`)}</dl>`;
}

// SESSION_LIST is what a list of sessions asks of each: its name, else the first words of its first message.
export const SESSION_LIST = `handle name frontendAgentId created messages(first: 1) { text }`;

// sessionTitle is how a session is named in a list: its name, else the first words of its first message, else
// "New session"; its handle goes beside it, small.
export function sessionTitle(s) {
  if (s.name) return s.name;
  const first = s.messages && s.messages[0] && s.messages[0].text.trim().replace(/\s+/g, ' ');
  if (!first) return 'New session';
  return first.length > 48 ? first.slice(0, 47).replace(/\s+\S*$/, '').replace(/[\s,;:.!?-]+$/, '') + '…' : first;
}

// CopyField shows a command in a read-only field with a button that copies it.
export function CopyField({ label, value, id }) {
  const [copied, setCopied] = useState('');
  const input = useRef(null);
  const copy = async () => {
    input.current.select();
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied.');
    } catch {
      // Outside a secure context there is no clipboard API: the text is selected for Ctrl-C.
      setCopied(document.execCommand && document.execCommand('copy') ? 'Copied.' : 'Selected: press Ctrl-C to copy.');
    }
  };
  return html`<div class="copy">
    <label for=${id}>${label}</label>
    <div class="row"><input id=${id} ref=${input} readonly value=${value} onFocus=${(e) => e.target.select()} />
    <button type="button" onClick=${copy}>Copy</button></div>
    <span class="muted" aria-live="polite">${copied}</span>
  </div>`;
}
