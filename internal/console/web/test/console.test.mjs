// The console in a real browser (Debian's chromium, driven by playwright-core), against a real node that
// browser_test.go started: sign in (a wrong key first), chat with the front agent and see the reply stream,
// the session's timeline (routing, func calls, scrubbing), agents (detail, routing, registration), assistants,
// responses (conversations, their items, a response by its ID), and operations as admin (revoke a key). Every page
// gets a screenshot and a check that each field has a label.
//
// It prints one JSON line per step on stdout and, last, {"figures": ...}. Exit 0: all passed; 77: the browser
// could not start (the Go test skips, saying why); anything else: a failure, with failure.png in ARTIFACTS.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};
const base = env('CONSOLE_URL');
const artifacts = env('ARTIFACTS');
const sends = Number(process.env.SENDS || 5);
mkdirSync(artifacts, { recursive: true });
const log = (o) => console.log(JSON.stringify(o));

let browser;
try {
  browser = await chromium.launch({
    executablePath: env('CHROMIUM'),
    headless: true,
    // What Debian's chromium needs here: no sandbox as root, and none of its own calls to the network.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
    timeout: 60000,
  });
} catch (e) {
  console.error(`the browser cannot run: ${e.message.split('\n')[0]}`);
  process.exit(77);
}

const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
const page = await context.newPage();
page.setDefaultTimeout(20000);
const origin = new URL(base).origin;
const problems = [];
const foreign = [];
page.on('request', (r) => {
  const u = new URL(r.url());
  if (u.protocol !== 'data:' && u.origin !== origin) foreign.push(r.url());
});
page.on('websocket', (ws) => {
  if (new URL(ws.url()).host !== new URL(base).host) foreign.push(ws.url());
});
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
page.on('console', (m) => {
  // A refused request is the browser's own log line for answers the test asked for (the wrong key's 401).
  if (m.type() === 'error' && !/status of 401/.test(m.text())) problems.push(`console error: ${m.text()}`);
});

const shots = [];
async function shot(name, what) {
  await page.screenshot({ path: join(artifacts, name + '.png'), fullPage: true });
  shots.push({ file: name + '.png', shows: what });
}

// labelled checks that every field of the page has a label a screen reader reads, and that none sits outside the
// tab order: the page is usable from the keyboard.
async function labelled(where) {
  const bad = await page.evaluate(() =>
    [...document.querySelectorAll('input, select, textarea, button')]
      .filter((el) => el.type !== 'hidden' && el.offsetParent !== null)
      .filter((el) => {
        const named = el.labels?.length || el.getAttribute('aria-label') || (el.tagName === 'BUTTON' && el.textContent.trim());
        return !named || el.tabIndex < 0;
      })
      .map((el) => el.outerHTML.slice(0, 120)),
  );
  assert.deepEqual(bad, [], `${where}: fields without a label or out of the tab order`);
}

// hoverContrast hovers a button and returns the contrast ratio of its text on its background as drawn then (WCAG's
// formula): a hover rule that paints a blue button near white under white text drops it to about 1.
async function hoverContrast(locator) {
  await locator.hover();
  await page.waitForTimeout(50); // a transition, were one added, has nothing to do with the rule tested here
  return locator.evaluate((el) => {
    const rgb = (c) => c.match(/[\d.]+/g).slice(0, 3).map(Number);
    const lum = ([r, g, b]) => {
      const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
      return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
    };
    const st = getComputedStyle(el);
    const [a, b] = [lum(rgb(st.color)), lum(rgb(st.backgroundColor))].sort((x, y) => y - x);
    return (a + 0.05) / (b + 0.05);
  });
}

async function step(name, fn) {
  try {
    await fn();
    assert.deepEqual(problems, [], 'the page reported errors');
    log({ step: name, ok: true });
  } catch (e) {
    await page.screenshot({ path: join(artifacts, 'failure.png'), fullPage: true }).catch(() => {});
    log({ step: name, ok: false, error: String(e.stack || e) });
    await browser.close();
    process.exit(1);
  }
}

const figures = {};
let session = '';

await step('a wrong key is refused with a clear error', async () => {
  await page.goto(base + '/');
  await page.waitForFunction(() => performance.getEntriesByName('console-interactive').length > 0);
  figures.interactive_ms = await page.evaluate(() => performance.getEntriesByName('console-interactive')[0].startTime);
  figures.page_bytes_encoded = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return performance.getEntriesByType('resource').reduce((n, r) => n + r.encodedBodySize, nav.encodedBodySize);
  });
  await page.getByText('contrail-data/admin.key').first().waitFor();
  await labelled('sign-in');
  // The key field has the focus: type and press Enter, as from the keyboard.
  assert.equal(await page.evaluate(() => document.activeElement.id), 'api-key');
  await page.keyboard.type('ck_this-is-not-a-key');
  await page.keyboard.press('Enter');
  const alert = page.getByRole('alert');
  await alert.waitFor();
  assert.match(await alert.textContent(), /That key was refused: .*invalid API key/i);
  await shot('01-signin-wrong-key', 'the sign-in page: where the admin key is, and the error a wrong key gets');
  const ratio = await hoverContrast(page.locator('button[type=submit]', { hasText: 'Sign in' }));
  assert.ok(ratio >= 4.5, `Sign in under the pointer: contrast ${ratio.toFixed(2)}, want at least 4.5`);
  figures.sign_in_hover_contrast = Math.round(ratio * 100) / 100;
});

await step('sign in as a user', async () => {
  await page.fill('#api-key', env('USER_KEY'));
  await page.keyboard.press('Enter');
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('contrail.key')), env('USER_KEY'));
  // The page's heading has the focus; Tab goes to the page's first field, Shift+Tab back through the header.
  const active = () => page.evaluate(() => `${document.activeElement.tagName} ${document.activeElement.id || document.activeElement.textContent}`);
  await page.waitForFunction(() => document.activeElement.tagName === 'H1');
  assert.equal(await active(), 'H1 Chat');
  await page.keyboard.press('Tab');
  assert.equal(await active(), 'SELECT chat-agent');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await active(), 'BUTTON Sign out');
});

// watchStream records, for the reply now expected, every text the streaming reply showed before the reply
// arrived whole.
const watchStream = () =>
  page.evaluate(() => {
    window.__seen = [];
    window.__observer?.disconnect();
    window.__observer = new MutationObserver(() => {
      for (const el of document.querySelectorAll('[data-streaming]')) {
        const id = el.dataset.replyId;
        if (!document.querySelector(`[data-message-id="${id}"]`)) window.__seen.push({ id, text: el.querySelector('.body').textContent });
      }
    });
    window.__observer.observe(document.body, { subtree: true, childList: true, characterData: true });
  });

async function ask(text) {
  await watchStream();
  const before = await page.locator('li.msg[data-type=response], li.msg[data-type=error]').count();
  await page.fill('#chat-input', text);
  await page.keyboard.press('Enter');
  // The reply is the response after the query just sent.
  const reply = page.locator('li.msg[data-type=response], li.msg[data-type=error]').last();
  await page.waitForFunction((n) => document.querySelectorAll('li.msg[data-type=response], li.msg[data-type=error]').length > n, before);
  const id = await reply.getAttribute('data-message-id');
  const final = await reply.locator('.body').textContent();
  const seen = await page.evaluate((rid) => window.__seen.filter((s) => s.id === rid).map((s) => s.text), id);
  return { id, final, seen };
}

await step('chat with the front agent: the reply streams before it is complete', async () => {
  await page.click('text=Chat');
  await labelled('chat');
  assert.equal(await page.inputValue('#chat-agent'), 'fixie');
  const r = await ask('What is 12 times 7?');
  session = new URL(page.url()).hash.split('/')[2];
  assert.equal(await page.evaluate(() => document.activeElement.id), 'chat-input', 'the keyboard is not back in the message box');
  assert.match(session, /^ses_/);
  assert.match(r.final, /84/);
  const partial = r.seen.filter((t) => t.length > 0 && t.length < r.final.length);
  assert.ok(partial.length > 0, `no part of the reply was on screen before the whole: saw ${JSON.stringify(r.seen)} of ${JSON.stringify(r.final)}`);
  assert.ok(partial.every((t) => r.final.startsWith(t.trim()) || r.final.includes(t.trim())), `streamed text ${JSON.stringify(partial)} is not the reply's`);
  figures.stream_pieces_seen = partial.length;
  await shot('02-chat', 'Chat: a session with the front agent fixie, the question and its streamed answer, past sessions on the left');
});

await step('past sessions are named by their first words, and Send keeps its colour under the pointer', async () => {
  const entry = page.locator('ul.sessions li.current a.session-title');
  await page.waitForFunction(() => document.querySelector('ul.sessions li.current a.session-title')?.textContent === 'What is 12 times 7?');
  assert.equal(await entry.getAttribute('href'), '#/chat/' + session);
  const ratio = await hoverContrast(page.locator('button[type=submit]', { hasText: 'Send' }));
  assert.ok(ratio >= 4.5, `Send under the pointer: contrast ${ratio.toFixed(2)}`);
});

await step('first streamed token after send, over several sends', async () => {
  const questions = ['What is 3 plus 4?', 'What is 100 divided by 8?', 'What is 2 to the power of 10?', 'What is 17 minus 5?', 'What is 6 times 9?', 'What is 81 divided by 9?', 'What is 12 plus 30?'];
  for (let i = 0; i < sends; i++) {
    const r = await ask(questions[i % questions.length]);
    assert.ok(r.final.length > 0);
  }
  const ms = await page.evaluate(() => performance.getEntriesByName('first-token').map((m) => m.duration));
  assert.ok(ms.length >= sends, `first-token measures: ${ms}`);
  const sorted = [...ms].sort((a, b) => a - b);
  figures.first_token_ms = ms.map((x) => Math.round(x * 10) / 10);
  figures.first_token_p50_ms = Math.round(sorted[Math.floor((sorted.length - 1) / 2)] * 10) / 10;
});

await step('an image embed is shown inline', async () => {
  const r = await ask('Draw a bar chart of 4, 9 and 1.');
  assert.match(r.final, /#chart/);
  const img = page.locator(`li[data-message-id="${r.id}"] .embeds img`);
  await img.waitFor();
  await page.waitForFunction((id) => {
    const el = document.querySelector(`li[data-message-id="${id}"] .embeds img`);
    return el && el.complete && el.naturalWidth > 0;
  }, r.id);
  await shot('03-chat-embed', "Chat: the chart agent's reply with its PNG embed shown inline (served by the node, signed URL)");
});

await step('the timeline shows routing and func calls, and scrubs to an earlier sequence', async () => {
  await page.click('text=Timeline of this session');
  await page.locator('[data-type="session.routed"]').first().waitFor();
  await labelled('timeline');
  const routed = page.locator('[data-type="session.routed"]').first();
  assert.match(await routed.textContent(), /calc \(chosen\)/);
  assert.match(await routed.textContent(), /\d\.\d{3}/); // candidates with scores
  await page.locator('[data-kind="ask_func"]').first().waitFor();
  const call = await page.locator('[data-kind="func_says"]').first().textContent();
  assert.match(call, /took/); // the func's duration
  // Live: a question posted now (from this tab, with its key) shows up on the open timeline as it is answered.
  const before = await page.locator('li.event').count();
  await page.evaluate(async (h) => {
    const res = await fetch('/graphql', { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: 'Bearer ' + sessionStorage.getItem('contrail.key') },
      body: JSON.stringify({ query: 'mutation($s: String!) { sendSessionMessage(messageData: {session: $s, text: "What is 5 plus 3?"}) { message { id } } }', variables: { s: h } }) });
    if (!res.ok) throw new Error(await res.text());
  }, session);
  await page.waitForFunction((n) => {
    const evs = [...document.querySelectorAll('li.event')];
    return evs.length > n && evs[evs.length - 1].dataset.type === 'session.reply_posted';
  }, before);
  await shot('04-timeline', 'Timeline: every event of the session with offsets; routing with candidates and scores, func calls with arguments, results and durations');

  const events = await page.locator('li.event').count();
  const firstSeq = await page.locator('li.event').first().getAttribute('data-sequence');
  await page.focus('#scrub');
  await page.keyboard.press('Home');
  assert.equal(await page.textContent('#scrub-seq'), firstSeq);
  assert.equal(await page.locator('li.event').count(), 1);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  const third = await page.locator('li.event').nth(2).getAttribute('data-sequence');
  assert.equal(await page.textContent('#scrub-seq'), third);
  assert.equal(await page.inputValue('#replay-cmd'), `contrail replay session ${session} --from ${third}`);
  await page.click('text=Copy');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `contrail replay session ${session} --from ${third}`);
  assert.match(await page.textContent('aside.side'), new RegExp(`${events - 3} later events hidden`));
  await shot('05-timeline-scrubbed', `Timeline scrubbed back to sequence ${third}: later events hidden, the session as it stood then, the replay command`);
  await page.click('text=Follow live');
  assert.equal(await page.locator('li.event').count(), events);
});

await step('agents: detail, try routing, register by URL', async () => {
  await page.click('nav >> text=Agents');
  await page.locator('table.grid a', { hasText: 'calc' }).click();
  await page.getByRole('heading', { name: 'Few-shots' }).waitFor();
  assert.match(await page.textContent('article.agent'), /Ask Func\[calc\]/);
  await labelled('agents');
  await shot('06-agent-detail', 'Agents: the calc agent: its base prompt, few-shots, funcs and sample queries');
  await page.fill('#route-q', 'Generate a random number between 5 and 50');
  await page.click('button:has-text("Route")');
  await page.locator('#route-result tbody tr').first().waitFor();
  assert.equal(await page.locator('#route-result tbody tr').first().getAttribute('data-agent'), 'genrand');
  await shot('07-agent-route', 'Agents: routing a question, the candidates with their scores (genrand first)');
  for (const label of ['Route', 'Register']) {
    const ratio = await hoverContrast(page.locator('button[type=submit]', { hasText: label }));
    assert.ok(ratio >= 4.5, `${label} under the pointer: contrast ${ratio.toFixed(2)}`);
  }
  // An agent whose URL does not answer is registered, with the node's warning and what it means for routing.
  await page.fill('#reg-handle', 'ghost');
  await page.fill('#reg-url', env('DEAD_AGENT_URL'));
  await page.click('button:has-text("Register")');
  await page.locator('#reg-done').waitFor();
  assert.match(await page.textContent('#reg-done'), /Registered ghost \(codeshot, 0 sample queries\)/);
  assert.match(await page.textContent('#reg-done .warning'), /not yet reachable/);
  assert.match(await page.textContent('#reg-unroutable'), /router never picks/);
  await shot('07b-agent-unreachable', 'Agents: an agent registered while its URL does not answer, with the warning');
  await page.fill('#reg-handle', 'dice');
  await page.fill('#reg-url', env('AGENT_URL'));
  await page.click('button:has-text("Register")');
  await page.locator('#reg-done').waitFor();
  assert.match(await page.textContent('#reg-done'), /Registered dice \(codeshot, \d+ sample queries\)/);
  await page.click('#reg-done a');
  await page.getByRole('heading', { name: 'Funcs' }).waitFor();
  await shot('08-agent-registered', 'Agents: dice, registered by URL from the browser, read from its description');
  // A second registration of the same handle is refused in words.
  await page.fill('#reg-handle', 'dice');
  await page.fill('#reg-url', env('AGENT_URL'));
  await page.click('button:has-text("Register")');
  await page.locator('aside .error').waitFor();
});

await step('assistants: threads, messages, runs with steps', async () => {
  await page.click('nav >> text=Assistants');
  await page.locator('ul.sessions a').first().click();
  await page.getByRole('heading', { name: 'Runs' }).waitFor();
  await page.click('button:has-text("Show steps")');
  await page.locator('ol.steps li').first().waitFor();
  assert.match(await page.textContent('ol.history'), /queued.*in_progress.*completed/s);
  await labelled('assistants');
  await shot('09-assistants', "Assistants: a thread's messages, a run with its status history and steps");
});

await step("responses: conversations newest first, a conversation's items in order, a response by its ID", async () => {
  await page.click('nav >> text=Responses');
  const first = page.locator('#conversations li').first();
  await first.waitFor();
  assert.equal(await first.getAttribute('data-id'), env('CONVERSATION'));
  assert.match(await first.locator('a.session-title').textContent(), /^Plan a trip to Lisbon with three stops and check the weather…$/);
  assert.equal(await first.locator('code.id').textContent(), env('CONVERSATION'));
  assert.equal(await page.locator('#conversations li').nth(1).getAttribute('data-id'), env('OLD_CONVERSATION'));
  await labelled('responses');
  await first.locator('a.session-title').click();
  await page.locator('ol.items li[data-type="function_call_output"]').waitFor();
  const items = page.locator('ol.items li');
  assert.deepEqual(await items.evaluateAll((els) => els.map((el) => el.dataset.type)), ['message', 'function_call', 'function_call_output', 'message', 'message']);
  assert.match(await items.nth(0).textContent(), /user.*Plan a trip to Lisbon/s);
  assert.match(await items.nth(1).textContent(), /Function call.*get_weather\(\{"city":"Lisbon"\}\)/s);
  assert.match(await items.nth(2).textContent(), /Function output.*of get_weather.*sunny, 24C/s);
  assert.match(await items.nth(3).textContent(), /user.*Thanks, what should I pack\?/s);
  assert.match(await items.nth(4).textContent(), /assistant/);
  assert.match(await page.textContent('dl.kv'), /console test/); // its metadata
  await shot('09c-responses-conversation', "Responses: the account's conversations by their first words, and one's items: a message, a function call and its output, a response's input and output");
  await page.fill('#response-id', env('RESPONSE'));
  await page.keyboard.press('Enter');
  await page.locator('#response-status').waitFor();
  assert.equal(await page.textContent('#response-status'), 'completed');
  assert.match(await page.textContent('#response'), /model\s*offline/);
  assert.match(await page.textContent('#response-usage'), /total_tokens\s*\d+/);
  assert.equal(await page.locator('#response ol.items li[data-type="message"]').count(), 1);
  assert.equal(await page.locator(`#response a[href="#/responses/conversation/${env('CONVERSATION')}"]`).count(), 1);
  await labelled('responses (a response)');
  await shot('09d-responses-response', 'Responses: a response opened by its ID: status, model, output items and usage, the conversation it is in');
});

await step('julep: an agent, its task, an execution with its transitions', async () => {
  await page.click('nav >> text=Julep');
  await page.locator(`#julep-agents tr[data-id="${env('JULEP_AGENT')}"] a`).click();
  await page.locator('#julep-tasks a', { hasText: 'count' }).click();
  await page.locator(`#julep-executions a[href="#/julep/execution/${env('JULEP_EXECUTION')}"]`).click();
  await page.locator('#julep-transitions li').first().waitFor();
  assert.equal(await page.textContent('#julep-execution-status'), 'succeeded');
  const types = await page.locator('#julep-transitions li').evaluateAll((els) => els.map((el) => el.dataset.type));
  assert.deepEqual(types, ['init', 'step', 'finish']);
  assert.match(await page.textContent('article'), /42/); // (20 + 1) * 2
  await labelled('julep');
  await shot('09b-julep-execution', 'Julep: an execution of a task, its input and output, and its transitions in order');
  await page.click('nav >> text=Vector stores');
  await page.getByText('No vector stores yet').waitFor();
});

await step('a phone: nothing is wider than the screen', async () => {
  await page.setViewportSize({ width: 420, height: 900 });
  for (const [where, loaded] of [['#/chat/' + session, 'ul.sessions a.session-title'], ['#/julep/execution/' + env('JULEP_EXECUTION'), '#julep-transitions li'], ['#/agents', 'table.grid tbody tr'], ['#/responses/conversation/' + env('CONVERSATION'), 'ol.items li']]) {
    await page.goto(base + '/' + where);
    await page.locator(loaded).first().waitFor();
    const wide = await page.evaluate(() => [...document.querySelectorAll('header.top, header.top *, aside.side, aside.side *')]
      .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .map((el) => el.outerHTML.slice(0, 100)));
    assert.deepEqual(wide, [], `${where} at 420 px: wider than the screen`);
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), `${where} scrolls sideways at 420 px`);
  }
  await shot('12-phone-agents', 'Agents on a 420 px phone: the navigation wraps under the brand');
  await page.goto(base + '/#/chat/' + session);
  await page.locator('ul.sessions a.session-title').first().waitFor();
  await shot('12-phone-chat', 'Chat on a 420 px phone: past sessions by their first words, long IDs wrapped');
  await page.goto(base + '/#/responses/conversation/' + env('CONVERSATION'));
  await page.locator('ol.items li').first().waitFor();
  await shot('12-phone-responses', 'Responses on a 420 px phone: conversations by their first words over their IDs, wrapped, then the items');
  await page.setViewportSize({ width: 1360, height: 900 });
});

await step('operations without an admin key say so', async () => {
  await page.click('nav >> text=Operations');
  await page.getByText('need an admin key').waitFor();
  await labelled('operations (user)');
});

await step('sign out, sign in as admin, revoke a key', async () => {
  await page.click('button:has-text("Sign out")');
  await page.locator('#api-key').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem('contrail.key')), null);
  await page.fill('#api-key', env('ADMIN_KEY'));
  await page.keyboard.press('Enter');
  await page.getByRole('navigation', { name: 'Pages' }).waitFor();
  await page.click('nav >> text=Operations');
  await page.locator('#accounts').waitFor();
  await page.locator('#projections').waitFor();
  await page.locator('#node-ready').waitFor();
  assert.match(await page.textContent('#accounts'), /ada/);
  await page.click(`#accounts a:has-text("ada")`);
  const row = page.locator(`tr[data-key-id="${env('SPARE_KEY_ID')}"]`);
  await row.waitFor();
  await labelled('operations');
  await shot('10-operations', 'Operations: node health, projection lag, accounts with usage against quotas, keys, the dead-letter queue');
  await row.locator('button.danger').click();
  await row.locator('button:has-text("Yes")').click();
  await row.locator('text=revoked').waitFor();
  await shot('11-key-revoked', "Operations: ada's spare key revoked by the admin");
  // A key issued here and then revoked leaves the screen with its Copy button.
  await page.fill('#new-key', 'brief');
  await page.click('button:has-text("Issue key")');
  await page.locator('#new-key-value').waitFor();
  const id = (await page.textContent('label[for="new-key-value"]')).match(/Key (\S+)/)[1];
  const fresh = page.locator(`tr[data-key-id="${id}"]`);
  await fresh.locator('button.danger').click();
  await fresh.locator('button:has-text("Yes")').click();
  await fresh.locator('text=revoked').waitFor();
  assert.equal(await page.locator('#new-key-value').count(), 0, 'the revoked key is still on screen');
  await page.getByText(`Revoked ${id}; its value is cleared`).waitFor();
});

await step('re-drive a dead letter', async () => {
  const entry = page.locator('#dlq tbody tr', { hasText: 'greeter' });
  await entry.waitFor();
  await entry.locator('button').click();
  await page.getByText(/Handed event \d+ back to greeter/).waitFor();
  await page.locator('#dlq-empty').waitFor();
});

assert.deepEqual(foreign, [], 'the console asked another origin for something');
figures.requests_elsewhere = foreign.length;
log({ figures, session, screenshots: shots });
await browser.close();
