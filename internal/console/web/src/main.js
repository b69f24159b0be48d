// The console's shell: sign-in, navigation by the URL's hash (#/chat/ses_..., #/timeline/ses_...), and the pages.
import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, forgetKey, health, rest, saveKey, savedKey } from './api.js';
import { Subscriptions } from './ws.js';
import { ErrorBox, html, Session } from './ui.js';
import { Chat } from './chat.js';
import { Timeline } from './timeline.js';
import { Agents } from './agents.js';
import { Assistants } from './assistants.js';
import { Responses } from './responses.js';
import { Operations } from './operations.js';
import { Julep } from './julep.js';
import { VectorStores } from './vectorstores.js';

const pages = [
  ['chat', 'Chat', Chat],
  ['timeline', 'Timeline', Timeline],
  ['agents', 'Agents', Agents],
  ['assistants', 'Assistants', Assistants],
  ['responses', 'Responses', Responses],
  ['vector-stores', 'Vector stores', VectorStores],
  ['julep', 'Julep', Julep],
  ['operations', 'Operations', Operations],
];

const parseHash = () => location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent).filter(Boolean);

function useRoute() {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const on = () => setRoute(parseHash());
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

function SignIn({ onSignIn, error }) {
  const [key, setKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [node, setNode] = useState(null);
  useEffect(() => {
    health().then(setNode, () => setNode({ ready: false, status: { reason: 'the node does not answer' } }));
  }, []);
  const submit = async (e) => {
    e.preventDefault();
    setBusy(true);
    await onSignIn(key.trim());
    setBusy(false);
  };
  return html`<main id="main" class="signin">
    <h1>Contrail console</h1>
    <form onSubmit=${submit} aria-describedby="where-key">
      <label for="api-key">API key</label>
      <input id="api-key" type="password" autocomplete="off" spellcheck="false" required value=${key}
        onInput=${(e) => setKey(e.target.value)} autofocus />
      <button type="submit" disabled=${busy}>${busy ? 'Signing in…' : 'Sign in'}</button>
      <${ErrorBox} error=${error} />
    </form>
    <section id="where-key" class="help">
      <h2>Where is my key?</h2>
      <p>On its first start, <code>contrail serve</code> creates an admin account and writes its key
        to <code>contrail-data/admin.key</code> (in the node's <code>--data-dir</code>; mode 0600). Print it with:</p>
      <pre>cat contrail-data/admin.key</pre>
      <p>With it, make a key for a user: <code>contrail accounts create NAME</code> (the key is the last line), or in
        Operations once signed in. The key stays in this tab only (session storage) until you sign out.</p>
    </section>
    <p class="muted" aria-live="polite">${node ? (node.ready ? 'Node ready.' : `Node not ready: ${node.status.reason || node.status.status}`) : ''}</p>
  </main>`;
}

function Shell({ session, route, onSignOut, lost }) {
  const [name, ...rest] = route;
  const page = pages.find((p) => p[0] === name) || pages[0];
  const Current = page[2];
  useEffect(() => {
    document.title = `${page[1]} · Contrail`;
  }, [page]);
  return html`<${Session.Provider} value=${session}>
    <a class="skip" href="#main" onClick=${(e) => { e.preventDefault(); document.querySelector('main h1')?.focus(); }}>Skip to content</a>
    <header class="top">
      <span class="brand">Contrail</span>
      <nav aria-label="Pages"><ul>${pages.map(([id, label]) => html`<li><a href=${'#/' + id} aria-current=${id === page[0] ? 'page' : undefined}>${label}</a></li>`)}</ul></nav>
      <span class="who">${session.me.username || session.me.account_id}${session.me.admin ? html` <span class="badge">admin</span>` : null}</span>
      <button type="button" class="signout" onClick=${onSignOut}>Sign out</button>
    </header>
    ${lost ? html`<p class="error banner" role="alert">${lost} <button type="button" onClick=${() => location.reload()}>Reconnect</button></p>` : null}
    <main id="main"><${Current} args=${rest} /></main>
  <//>`;
}

function App() {
  const route = useRoute();
  const [key, setKey] = useState(savedKey());
  const [me, setMe] = useState(null);
  const [error, setError] = useState(null);
  const [lost, setLost] = useState('');

  const signIn = async (k) => {
    try {
      const who = await rest(k, 'GET', '/admin/whoami');
      saveKey(k);
      setError(null);
      setMe(who);
      setKey(k);
    } catch (e) {
      forgetKey();
      setKey('');
      setMe(null);
      setError(e instanceof ApiError && e.status === 401 ? `That key was refused: ${e.message}. Check that you copied all of it.` : e);
    }
  };
  useEffect(() => {
    if (key && !me) signIn(key);
  }, []);
  const session = useMemo(() => {
    if (!key || !me) return null;
    return { key, me, subs: new Subscriptions(key, (why) => setLost(`Lost the live connection to the node (${why}).`)) };
  }, [key, me]);
  useEffect(() => () => session && session.subs.close(), [session]);
  useEffect(() => {
    document.body.dataset.ready = session ? 'console' : key ? 'checking' : 'signin';
    if (!performance.getEntriesByName('console-interactive').length) performance.mark('console-interactive');
  });

  const signOut = () => {
    forgetKey();
    setKey('');
    setMe(null);
    setError(null);
    location.hash = '';
  };
  if (!session) {
    if (key && !error) return html`<main id="main"><p class="muted">Signing in…</p></main>`;
    return html`<${SignIn} onSignIn=${signIn} error=${error} />`;
  }
  return html`<${Shell} session=${session} route=${route} onSignOut=${signOut} lost=${lost} />`;
}

render(html`<${App} />`, document.getElementById('app'));
