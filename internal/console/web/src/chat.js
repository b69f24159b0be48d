// Chat: talk to an agent in a session; the reply streams token by token over the sessionMessages subscription.
import { useEffect, useRef, useState } from 'preact/hooks';
import { gql } from './api.js';
import { ErrorBox, fmtTime, html, Loading, Page, SESSION_LIST, sessionTitle, useLoad, useSession } from './ui.js';

export const MESSAGE_FIELDS = `id text type timestamp sentBy { handle } inReplyTo { id } embeds { key contentType uri }`;

const LISTS = `{ allSessions(first: 50) { ${SESSION_LIST} }
  allAgents(first: 1000) { agentId handle name kind } }`;

export function Chat({ args }) {
  const { key } = useSession();
  const handle = args[0] || '';
  const lists = useLoad(() => gql(key, LISTS), [key, handle]);
  const [agent, setAgent] = useState('fixie');
  const [pending, setPending] = useState('');
  const [error, setError] = useState(null);
  const agents = (lists.data && lists.data.allAgents) || [];
  const handleOf = (id) => (agents.find((a) => a.agentId === id) || {}).handle || id;
  // A session is listed by its first words: once the first message of an untitled one is sent, the list is read again.
  const current = ((lists.data && lists.data.allSessions) || []).find((s) => s.handle === handle);
  const untitled = !current || (!current.name && !(current.messages || []).length);

  const newSession = async (firstMessage) => {
    setError(null);
    try {
      const d = await gql(key, `mutation($a: String) { createSession(sessionData: {frontendAgentId: $a}) { session { handle } } }`, { a: agent });
      setPending(firstMessage || '');
      location.hash = '#/chat/' + d.createSession.session.handle;
    } catch (e) {
      setError(e);
    }
  };

  return html`<${Page} title=${handle ? `Chat · ${handle}` : 'Chat'}>
    <div class="split">
      <aside class="side" aria-label="Sessions">
        <form class="stack" onSubmit=${(e) => { e.preventDefault(); newSession(''); }}>
          <label for="chat-agent">Agent for a new session</label>
          <select id="chat-agent" value=${agent} onChange=${(e) => setAgent(e.target.value)}>
            ${(agents.length ? agents : [{ handle: 'fixie' }]).map((a) => html`<option value=${a.handle}>${a.handle}${a.name ? ` — ${a.name}` : ''}</option>`)}
          </select>
          <button type="submit">New session</button>
        </form>
        <${ErrorBox} error=${error || lists.error} />
        <h2>Past sessions</h2>
        ${lists.loading && !lists.data ? html`<${Loading} what="sessions" />` : null}
        <ul class="sessions">
          ${((lists.data && lists.data.allSessions) || []).map((s) => html`<li class=${s.handle === handle ? 'current' : ''}>
            <a class="session-title" href=${'#/chat/' + s.handle} aria-current=${s.handle === handle ? 'page' : undefined}>${sessionTitle(s)}</a>
            <span class="muted">${handleOf(s.frontendAgentId)} · ${fmtTime(s.created)} · <code class="id">${s.handle}</code></span>
            <a class="small" href=${'#/timeline/' + s.handle} aria-label=${'Timeline of ' + s.handle}>timeline</a>
          </li>`)}
        </ul>
      </aside>
      <div class="main-col">
        ${handle
          ? html`<${Conversation} key=${handle} handle=${handle} pending=${pending} onPendingSent=${() => setPending('')} onSent=${untitled ? lists.reload : null} />`
          : html`<${Composer} ready=${true} label=${`Message to ${agent} (starts a new session)`} onSend=${(text) => newSession(text)} />`}
      </div>
    </div>
  <//>`;
}

// Conversation is one session: its messages, the replies streaming now, and the box to send more.
function Conversation({ handle, pending, onPendingSent, onSent }) {
  const { key, subs } = useSession();
  const [messages, setMessages] = useState([]);
  const [streams, setStreams] = useState({}); // reply id -> {text, inReplyTo, deltas}
  const [ready, setReady] = useState(false);
  const [front, setFront] = useState('');
  const [error, setError] = useState(null);
  const firstToken = useRef(null); // {start} while a sent query waits for its first streamed token
  const measured = useRef(false);

  const upsert = (list) =>
    setMessages((old) => {
      const byId = new Map(old.map((m) => [m.id, m]));
      for (const m of list) byId.set(m.id, m);
      return [...byId.values()].sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
    });

  useEffect(() => {
    // Follow first, then read the history: what happens between the two is in one or the other (or both, and
    // then the same id is kept once).
    const stop = subs.subscribe(`subscription($h: String!) { sessionMessages(handle: $h) { kind sequence
        message { ${MESSAGE_FIELDS} } delta { messageId inReplyTo index text } } }`, { h: handle }, {
      next: (d) => {
        const u = d.sessionMessages;
        if (u.kind === 'ready') {
          gql(key, `query($h: String!) { sessionByHandle(handle: $h) { frontendAgentId messages(first: 1000) { ${MESSAGE_FIELDS} } } }`, { h: handle }).then(
            (r) => {
              if (!r.sessionByHandle) {
                setError(`No session ${handle} in your account.`);
                return;
              }
              setFront(r.sessionByHandle.frontendAgentId);
              upsert(r.sessionByHandle.messages);
              setReady(true);
            },
            setError,
          );
        } else if (u.kind === 'message') {
          upsert([u.message]);
          setStreams((s) => {
            if (!s[u.message.id]) return s;
            const { [u.message.id]: _, ...rest } = s;
            return rest;
          });
        } else if (u.kind === 'delta') {
          const dl = u.delta;
          if (firstToken.current && !firstToken.current.reply) firstToken.current.reply = dl.messageId;
          setStreams((s) => {
            const cur = s[dl.messageId] || { text: '', inReplyTo: dl.inReplyTo, deltas: 0 };
            return { ...s, [dl.messageId]: { ...cur, text: cur.text + dl.text, deltas: cur.deltas + 1 } };
          });
        }
      },
      error: (msg) => setError(msg),
    });
    return stop;
  }, [handle]);

  // The first token of a reply is on screen: how long after the send (performance.measure, for anyone profiling).
  useEffect(() => {
    const f = firstToken.current;
    if (f && f.reply && streams[f.reply] && !measured.current) {
      measured.current = true;
      performance.measure('first-token', { start: f.start, end: performance.now() });
      firstToken.current = null;
    }
  }, [streams]);

  const send = async (text) => {
    setError(null);
    firstToken.current = { start: performance.now(), reply: null };
    measured.current = false;
    try {
      const d = await gql(key, `mutation($s: String!, $t: String!) { sendSessionMessage(messageData: {session: $s, text: $t}) { message { ${MESSAGE_FIELDS} } } }`, { s: handle, t: text });
      upsert([d.sendSessionMessage.message]);
      if (onSent) onSent();
      return true;
    } catch (e) {
      firstToken.current = null;
      setError(e);
      return false;
    }
  };

  useEffect(() => {
    if (ready && pending) {
      onPendingSent();
      send(pending);
      // The question was typed before the session existed: keep the keyboard where the next one goes.
      document.getElementById('chat-input')?.focus();
    }
  }, [ready]);

  const list = useRef(null);
  useEffect(() => {
    const el = list.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [messages, streams]);

  return html`<div class="conversation">
    <p class="muted">Session <code>${handle}</code>${front ? html` · front agent <code>${front}</code>` : null}${' · '}<a href=${'#/timeline/' + handle}>Timeline of this session</a></p>
    <${ErrorBox} error=${error} />
    <ol class="messages" ref=${list} aria-label="Messages" aria-live="polite" aria-relevant="additions">
      ${messages.map((m) => html`<${Message} m=${m} />`)}
      ${Object.entries(streams).map(([id, s]) => html`<li class="msg response streaming" data-streaming="true" data-reply-id=${id} aria-busy="true">
        <div class="meta">writing… <span class="muted">(${s.deltas} pieces so far)</span></div>
        <div class="body">${s.text}</div>
      </li>`)}
    </ol>
    ${!ready ? html`<${Loading} what="the session" />` : null}
    <${Composer} ready=${ready} label="Message" onSend=${send} />
  </div>`;
}

function Message({ m }) {
  return html`<li class=${'msg ' + m.type} data-message-id=${m.id} data-type=${m.type}>
    <div class="meta"><strong>${m.sentBy.handle}</strong> · <time datetime=${m.timestamp}>${fmtTime(m.timestamp)}</time>${m.type === 'error' ? ' · no answer' : ''}</div>
    <div class="body">${m.text}</div>
    ${m.embeds.length ? html`<ul class="embeds">${m.embeds.map((e) => html`<li><${Embed} e=${e} /></li>`)}</ul>` : null}
  </li>`;
}

// Embed shows an image that this node serves inline; anything else (and images elsewhere, which the console's
// policy does not load) as a link.
function Embed({ e }) {
  let sameOrigin = e.uri.startsWith('data:');
  try {
    sameOrigin = sameOrigin || new URL(e.uri, location.href).origin === location.origin;
  } catch {
    sameOrigin = false;
  }
  if (e.contentType.startsWith('image/') && sameOrigin) {
    return html`<figure><img src=${e.uri} alt=${'embed #' + e.key} /><figcaption>#${e.key} · ${e.contentType}</figcaption></figure>`;
  }
  return html`<a href=${e.uri} target="_blank" rel="noopener noreferrer">#${e.key} (${e.contentType})</a>`;
}

function Composer({ ready, label, onSend }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (ev) => {
    ev.preventDefault();
    const t = text.trim();
    if (!t) return;
    setBusy(true);
    const ok = await onSend(t);
    setBusy(false);
    if (ok !== false) setText('');
  };
  return html`<form class="composer" onSubmit=${submit}>
    <label for="chat-input">${label}</label>
    <div class="row">
      <input id="chat-input" autocomplete="off" value=${text} onInput=${(e) => setText(e.target.value)} placeholder="What is 12 times 7?" />
      <button type="submit" disabled=${!ready || busy}>${busy ? 'Sending…' : 'Send'}</button>
    </div>
  </form>`;
}
