// Drives Julep's official npm SDK (@julep/sdk 2.7.2) against a Contrail node, as a program written for Julep would,
// changing only the base URL. It prints one JSON object of what it saw; sdk_test.go checks it. JULEP_BASE_URL
// (<node>/julep) and JULEP_API_KEY come from the environment, as the SDK reads them.
import Julep from '@julep/sdk';

const client = new Julep({ maxRetries: 0 });
const out = {};

// Agents: create, get, update (PATCH), reset (PUT), createOrUpdate at a chosen UUID, list, delete.
const agent = await client.agents.create({
  name: 'Ada',
  about: 'a mathematician',
  model: 'gpt-4o-mini',
  instructions: ['be brief', 'cite numbers'],
  metadata: { team: 'x' },
});
out.agentGet = await client.agents.get(agent.id);
out.agentPatched = await client.agents.update(agent.id, { about: 'counts things', metadata: { rank: 1 } });
const chosen = '7a2b3c4d-3333-4e2b-9d3c-0123456789ab';
out.agentChosen = await client.agents.createOrUpdate(chosen, { name: 'Bob' });
out.agentReset = await client.agents.reset(chosen, { name: 'Bob II', about: 'reset' });
out.agentList = [];
for await (const a of client.agents.list({ limit: 10, direction: 'asc' })) out.agentList.push(a.id);
await client.agents.delete(chosen);
try {
  await client.agents.get(chosen);
  out.deletedAgentGet = 'found';
} catch (e) {
  out.deletedAgentGet = { status: e.status, name: e.constructor.name };
}

// Users.
const user = await client.users.create({ name: 'Grace', about: 'an admiral' });
out.userGet = await client.users.get(user.id);

// A function tool of the agent.
out.tool = await client.agents.tools.create(agent.id, {
  name: 'get_weather',
  type: 'function',
  description: 'The weather in a city',
  function: { parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
});

// Docs, searched right after they are made; embed.
const doc = await client.agents.docs.create(agent.id, { title: 'Tower', content: 'The Eiffel tower is 330 metres tall.' });
out.docSearch = await client.agents.docs.search(agent.id, { text: 'Eiffel tower' });
out.docGet = await client.docs.get(doc.id);
out.userDoc = await client.users.docs.create(user.id, { title: 'Grace', content: ['Grace climbed the Eiffel tower.'] });
out.embed = await client.docs.embed({ text: 'hello there' });

// Lists under metadata_filter, which the SDK sends in dot notation (metadata_filter.team=x).
const names = async (page) => {
  const got = [];
  for await (const x of page) got.push(x.name ?? x.title);
  return got;
};
await client.users.create({ name: 'Alan', metadata: { team: 'y' } });
await client.agents.docs.create(agent.id, { title: 'Rome', content: 'Rome is old.', metadata: { lang: 'it' } });
out.filtered = {
  agents: await names(client.agents.list({ metadata_filter: { team: 'x' } })),
  agentsNone: await names(client.agents.list({ metadata_filter: { team: 'nobody' } })),
  users: await names(client.users.list({ metadata_filter: { team: 'y' } })),
  docs: await names(client.agents.docs.list(agent.id, { metadata_filter: { lang: 'it' } })),
};

// A session with a system template of its own and recall of the docs; chat plain and streaming; render; history.
const session = await client.sessions.create({
  agent: agent.id,
  user: user.id,
  situation: 'a quiz about Paris',
  system_template: 'You are {{agent.name}}, talking to {{user.name}} in {{session.situation}}.',
  recall_options: { mode: 'text', limit: 5 },
});
out.session = await client.sessions.get(session.id);
out.render = await client.sessions.render(session.id, { messages: [{ role: 'user', content: 'How tall is the Eiffel tower?' }] });
out.chat = await client.sessions.chat(session.id, { messages: [{ role: 'user', content: 'How tall is the Eiffel tower?' }] });

// The SDK returns a streamed chat's body as it came; read the server-sent chunks from the raw response.
const streamed = await client.sessions
  .chat(session.id, { messages: [{ role: 'user', content: 'Count to four' }], stream: true })
  .asResponse();
out.streamContentType = streamed.headers.get('content-type');
out.streamChunks = (await streamed.text())
  .split('\n')
  .filter((l) => l.startsWith('data: '))
  .map((l) => JSON.parse(l.slice(6)));

// A function tool call comes back to the client; the client answers it in the next chat.
out.toolChat = await client.sessions.chat(session.id, { messages: [{ role: 'user', content: 'Weather in Paris?' }] });
const call = out.toolChat.choices[0].message.tool_calls[0];
out.toolAnswer = await client.sessions.chat(session.id, {
  messages: [{ role: 'tool', tool_call_id: call.id, content: '{"sky": "sunny"}' }],
});

// A chat whose answer takes longer than the client waits: the SDK times out and retries (with
// x-stainless-retry-count), and the retry gets the one turn's answer.
out.slowChat = await client.sessions.chat(
  session.id,
  { messages: [{ role: 'user', content: 'A slow question' }] },
  { timeout: 400, maxRetries: 5 },
);

out.history = await client.sessions.history(session.id);
out.sessionList = [];
for await (const s of client.sessions.list()) out.sessionList.push(s.id);

// Errors: a missing object is a 404; a bad body a 422 naming the field.
try {
  await client.sessions.get('00000000-0000-4000-8000-000000000000');
} catch (e) {
  out.missingSession = { status: e.status, name: e.constructor.name };
}
try {
  await client.agents.create({ about: 'no name' });
} catch (e) {
  out.badAgent = { status: e.status, name: e.constructor.name, error: e.error };
}

// A task of the agent: it runs, waits for input, is resumed through the SDK, and ends; its transitions list.
const task = await client.tasks.create(agent.id, {
  name: 'Add',
  input_schema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  main: [{ evaluate: { n: '$ _.n + 1' } }, { wait_for_input: { info: { ask: 'how many more?' } } }, { evaluate: { n: '$ steps[0].output.n + _.more' } }],
});
out.task = await client.tasks.get(task.id);
out.taskList = [];
for await (const t of client.tasks.list(agent.id)) out.taskList.push(t.id);
let execution = await client.executions.create(task.id, { input: { n: 1 } });
for (let i = 0; i < 200 && execution.status !== 'awaiting_input'; i++) {
  await new Promise((r) => setTimeout(r, 20));
  execution = await client.executions.get(execution.id);
}
out.waiting = execution;
await client.executions.changeStatus(execution.id, { status: 'running', input: { more: 40 } });
for (let i = 0; i < 200 && execution.status !== 'succeeded'; i++) {
  await new Promise((r) => setTimeout(r, 20));
  execution = await client.executions.status.get(execution.id);
}
out.execution = execution;
out.transitions = [];
for await (const tr of client.executions.transitions.list(execution.id)) out.transitions.push(tr.type);
try {
  await client.executions.create(task.id, { input: { n: 'one' } });
} catch (e) {
  out.badInput = { status: e.status, name: e.constructor.name };
}

console.log(JSON.stringify(out));
