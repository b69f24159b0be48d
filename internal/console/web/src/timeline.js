// Timeline: a session's events from the log (the sessionEvents subscription: history, then live), each with its
// time offset, and a slider to see the session as it was at any sequence.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { gql } from './api.js';
import { CopyField, ErrorBox, fmtTime, html, KeyValues, Loading, offset, Page, ScoreBar, SESSION_LIST, sessionTitle, useLoad, useSession } from './ui.js';

export function Timeline({ args }) {
  const handle = args[0] || '';
  return handle ? html`<${SessionTimeline} key=${handle} handle=${handle} />` : html`<${PickSession} />`;
}

function PickSession() {
  const { key } = useSession();
  const list = useLoad(() => gql(key, `{ allSessions(first: 100) { ${SESSION_LIST} } }`), [key]);
  return html`<${Page} title="Timeline">
    <p>Pick a session to see every event of it in the log, live while it runs.</p>
    <${ErrorBox} error=${list.error} />
    ${list.loading ? html`<${Loading} what="sessions" />` : null}
    <ul class="sessions">${((list.data && list.data.allSessions) || []).map((s) => html`<li>
      <a class="session-title" href=${'#/timeline/' + s.handle}>${sessionTitle(s)}</a> <span class="muted">${fmtTime(s.created)} · <code class="id">${s.handle}</code></span></li>`)}</ul>
  <//>`;
}

function SessionTimeline({ handle }) {
  const { subs } = useSession();
  const [evs, setEvs] = useState([]);
  const [error, setError] = useState(null);
  const [cursor, setCursor] = useState(-1); // index of the last event shown; -1 = follow the end
  useEffect(
    () =>
      subs.subscribe(`subscription($h: String!) { sessionEvents(handle: $h, fromSequence: 0) { sequence id type time version actor correlationId causationId data } }`, { h: handle }, {
        next: (d) => setEvs((old) => (old.length && old[old.length - 1].sequence >= d.sessionEvents.sequence ? old : [...old, d.sessionEvents])),
        error: setError,
      }),
    [handle],
  );
  const durations = useMemo(() => stepDurations(evs), [evs]);
  const last = evs.length - 1;
  const at = cursor < 0 || cursor > last ? last : cursor;
  const following = cursor < 0;
  const shown = evs.slice(0, at + 1);
  const start = evs.length ? Date.parse(evs[0].time) : 0;
  const seq = evs.length ? evs[at].sequence : 0;

  const selected = useRef(null);
  useEffect(() => {
    if (!following && selected.current) selected.current.scrollIntoView({ block: 'nearest' });
  }, [at, following]);

  return html`<${Page} title=${`Timeline · ${handle}`}>
    <p class="muted"><a href=${'#/chat/' + handle}>Chat of this session</a> · ${evs.length} events${following ? ' · following live' : ''}</p>
    <${ErrorBox} error=${error} />
    ${!evs.length && !error ? html`<${Loading} what="the log" />` : null}
    ${evs.length ? html`<div class="scrub">
      <label for="scrub">Show the log up to sequence <strong id="scrub-seq">${seq}</strong> (event ${at + 1} of ${evs.length})</label>
      <input id="scrub" type="range" min="0" max=${last} step="1" value=${at} aria-valuetext=${`sequence ${seq}, event ${at + 1} of ${evs.length}`}
        onInput=${(e) => { const v = Number(e.target.value); setCursor(v === last ? -1 : v); }} />
      <div class="row">
        <${CopyField} id="replay-cmd" label="Replay from here in a terminal" value=${`contrail replay session ${handle} --from ${seq}`} />
        <button type="button" disabled=${following} onClick=${() => setCursor(-1)}>Follow live</button>
      </div>
    </div>` : null}
    <div class="split">
      <ol class="events" aria-label="Events">
        ${shown.map((e, i) => html`<${EventItem} e=${e} i=${i} start=${start} prev=${i ? Date.parse(evs[i - 1].time) : start}
          duration=${durations.get(e.sequence)} current=${i === at && !following} refEl=${i === at ? selected : null} onPick=${() => setCursor(i === last ? -1 : i)} />`)}
      </ol>
      <aside class="side" aria-label="The session at this sequence">
        <h2>The session at sequence ${seq}</h2>
        <${StateAt} evs=${shown} />
        ${at < last ? html`<p class="muted">${last - at} later event${last - at === 1 ? '' : 's'} hidden.</p>` : null}
      </aside>
    </div>
  <//>`;
}

// stepDurations pairs each answer of a func or agent with the step that asked it (same reply, agent and name):
// how long the call took, by the log's clock.
function stepDurations(evs) {
  const open = new Map();
  const out = new Map();
  for (const e of evs) {
    if (e.type !== 'session.agent_step') continue;
    const d = e.data || {};
    const k = [d.reply_id, d.path || d.agent, d.name].join('|');
    if (d.kind === 'ask_func' || d.kind === 'ask_agent') open.set(k, Date.parse(e.time));
    if ((d.kind === 'func_says' || d.kind === 'agent_says') && open.has(k)) {
      out.set(e.sequence, Date.parse(e.time) - open.get(k));
      open.delete(k);
    }
  }
  return out;
}

function EventItem({ e, i, start, prev, duration, current, refEl, onPick }) {
  const t = Date.parse(e.time);
  const d = e.data || {};
  return html`<li class=${'event' + (current ? ' current' : '')} ref=${refEl} data-type=${e.type} data-kind=${d.kind || undefined} data-sequence=${e.sequence}>
    <div class="ev-head">
      <button type="button" class="seq" onClick=${onPick} aria-label=${`Scrub to sequence ${e.sequence}`}>#${e.sequence}</button>
      <span class="offset" title=${fmtTime(e.time)}>${offset(t - start)}</span>
      ${i ? html`<span class="muted">(${offset(t - prev)} after the previous)</span>` : null}
      <span class="type">${e.type}</span>
    </div>
    <div class="ev-body"><${EventBody} e=${e} duration=${duration} /></div>
    <details><summary>All fields</summary><${KeyValues} data=${{ ...d, _event_id: e.id, _version: e.version, _actor: e.actor, _correlation: e.correlationId, _causation: e.causationId }} /></details>
  </li>`;
}

const who = (d) => d.path || d.agent || '';

// EventBody says what an event did: richly for the types this console knows, as key/values for any other (the
// platform adds event types; none is hidden).
function EventBody({ e, duration }) {
  const d = e.data || {};
  const took = duration !== undefined ? html` <span class="badge">took ${offset(duration).slice(1)}</span>` : null;
  const call = d.call ? html` <span class="badge" title="the model call that produced this step">model call ${d.call}</span>` : null;
  switch (e.type) {
    case 'session.created':
      return html`<p>Session opened; front agent <code>${d.frontend_agent_handle || d.frontend_agent_id}</code>.</p>`;
    case 'session.message_posted':
      return html`<p><strong>${d.sent_by}</strong> asks: ${d.text}</p>${embedList(d.embeds)}`;
    case 'session.query_dispatched':
      return html`<p>Query <code>${d.message_id}</code> handed to agent <code>${d.agent_handle || d.agent_id}</code>; its reply will be <code>${d.reply_id}</code>.</p>`;
    case 'session.routed':
      return html`<div>
        <p>${d.path ? html`<code>${d.path}</code> ` : null}routed “${d.query}” → ${d.chosen ? html`<strong>${d.chosen}</strong>` : html`<em>no agent fits</em> (the front agent answers)`}</p>
        <table class="scores"><caption class="sr-only">Candidates and their scores</caption>
          <thead><tr><th scope="col">Candidate</th><th scope="col">Score</th></tr></thead>
          <tbody>${(d.matches || []).map((m) => html`<tr class=${m.handle === d.chosen ? 'chosen' : ''}><td>${m.handle}${m.handle === d.chosen ? ' (chosen)' : ''}</td><td><${ScoreBar} score=${m.score} fits=${m.handle === d.chosen} /></td></tr>`)}</tbody>
        </table></div>`;
    case 'session.agent_step':
      switch (d.kind) {
        case 'thought':
          return html`<p class="step thought"><code>${who(d)}</code> thinks: ${d.text}${call}</p>`;
        case 'ask_func':
          return html`<p class="step"><code>${who(d)}</code> calls func <strong>${d.name}</strong> with <code class="args">${d.text}</code>${call}</p>`;
        case 'func_says':
          return html`<p class="step"><code>${who(d)}</code> ← func <strong>${d.name}</strong> says: <code class="args">${d.text}</code>${took}</p>`;
        case 'ask_agent':
          return html`<p class="step"><code>${who(d)}</code> asks agent <strong>${d.name}</strong>: ${d.text}${call}</p>`;
        case 'agent_says':
          return html`<p class="step"><code>${who(d)}</code> ← agent <strong>${d.name}</strong> says: ${d.text}${took}</p>`;
        case 'answer':
          return html`<p class="step answer"><code>${who(d)}</code> answers: ${d.text}${call}</p>`;
        case 'failed':
          return html`<p class="step failed"><code>${who(d)}</code> failed: ${d.text}</p>`;
      }
      return html`<p class="step"><code>${who(d)}</code> ${d.kind}${d.name ? ` [${d.name}]` : ''}: ${d.text}${call}</p>`;
    case 'session.reply_posted':
      return html`<p><strong>${d.sent_by}</strong> replies: ${d.text}</p>${embedList(d.embeds)}`;
    case 'session.reply_failed':
      return html`<p class="failed">No reply from <strong>${d.sent_by}</strong>: ${d.error}</p>`;
    case 'session.deleted':
      return html`<p>Session deleted.</p>`;
  }
  return html`<${KeyValues} data=${d} />`;
}

function embedList(embeds) {
  const keys = Object.keys(embeds || {});
  if (!keys.length) return null;
  return html`<p class="muted">Embeds: ${keys.map((k) => html`<code>#${k}</code> (${embeds[k].content_type}) `)}</p>`;
}

// StateAt is the conversation as it stood at the last shown event.
function StateAt({ evs }) {
  const lines = [];
  let working = '';
  for (const e of evs) {
    const d = e.data || {};
    if (e.type === 'session.message_posted') lines.push({ id: d.message_id, who: d.sent_by, text: d.text, cls: 'query' });
    if (e.type === 'session.reply_posted') lines.push({ id: d.message_id, who: d.sent_by, text: d.text, cls: 'response' });
    if (e.type === 'session.reply_failed') lines.push({ id: d.message_id, who: d.sent_by, text: d.error, cls: 'error' });
    if (e.type === 'session.query_dispatched') working = d.agent_handle || d.agent_id;
    if (e.type === 'session.reply_posted' || e.type === 'session.reply_failed') working = '';
  }
  return html`<ol class="messages compact">
    ${lines.map((l) => html`<li class=${'msg ' + l.cls}><div class="meta"><strong>${l.who}</strong></div><div class="body">${l.text}</div></li>`)}
    ${working ? html`<li class="msg response muted">${working} is working on a reply…</li>` : null}
    ${!lines.length ? html`<li class="muted">No messages yet.</li>` : null}
  </ol>`;
}
