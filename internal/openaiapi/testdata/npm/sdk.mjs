// Drives OpenAI's official npm SDK, 4.x and 7.x, against a Contrail node, as a program written for OpenAI's
// Assistants API would, changing only the base URL: files, a vector store with a file polled to completion, a
// file batch, search, an assistant with file_search, a run polled and a run streamed, the answer's citation. It
// prints one JSON object of what each SDK saw; npm_test.go checks it. OPENAI_BASE_URL (<node>/v1) and
// OPENAI_API_KEY come from the environment, as the SDK reads them.
import OpenAI4, { toFile as toFile4 } from 'openai4';
import OpenAI7, { toFile as toFile7 } from 'openai7';

async function drive(OpenAI, toFile) {
  const client = new OpenAI({ maxRetries: 0 });
  const out = {};
  const manual = await client.files.create({
    file: await toFile(Buffer.from('Descaling the boiler.\nEvery three months run the descaling solution through the boiler.\n'), 'manual.txt'),
    purpose: 'assistants',
  });
  const faq = await client.files.create({
    file: await toFile(Buffer.from('The grinder has twelve settings.\n'), 'faq.md'),
    purpose: 'assistants',
  });
  const vs = await client.vectorStores.create({ name: 'kb', metadata: { team: 'support' } });
  out.store = vs;
  out.file = await client.vectorStores.files.createAndPoll(vs.id, { file_id: manual.id });
  out.batch = await client.vectorStores.fileBatches.createAndPoll(vs.id, { file_ids: [faq.id] });
  out.search = [];
  for await (const r of client.vectorStores.search(vs.id, { query: 'descaling the boiler', max_num_results: 5 })) out.search.push(r);
  out.storeAfter = await client.vectorStores.retrieve(vs.id);

  const assistant = await client.beta.assistants.create({
    model: 'gpt-4o-mini',
    tools: [{ type: 'file_search' }],
    tool_resources: { file_search: { vector_store_ids: [vs.id] } },
  });
  const thread = await client.beta.threads.create({ messages: [{ role: 'user', content: 'How often do I descale?' }] });
  out.run = await client.beta.threads.runs.createAndPoll(thread.id, { assistant_id: assistant.id });
  out.messages = (await client.beta.threads.messages.list(thread.id)).data;

  const streamed = await client.beta.threads.create({ messages: [{ role: 'user', content: 'How often do I descale?' }] });
  const stream = client.beta.threads.runs.stream(streamed.id, { assistant_id: assistant.id });
  out.events = [];
  for await (const ev of stream) out.events.push(ev.event);
  out.streamedMessages = (await client.beta.threads.messages.list(streamed.id)).data;

  const del = client.vectorStores.delete ?? client.vectorStores.del;
  out.deleted = await del.call(client.vectorStores, vs.id);
  try {
    await client.vectorStores.retrieve(vs.id);
    out.afterDelete = 'found';
  } catch (e) {
    out.afterDelete = { status: e.status, name: e.constructor.name };
  }
  out.ids = { manual: manual.id, faq: faq.id };
  return out;
}

const result = { v4: await drive(OpenAI4, toFile4), v7: await drive(OpenAI7, toFile7) };
process.stdout.write(JSON.stringify(result));
