// Drives openai 7.x's responses.compact() and the Agents SDK's OpenAIResponsesCompactionSession against a Contrail
// node (OPENAI_BASE_URL, OPENAI_API_KEY). It prints one JSON object of what each saw;
// internal/openaiapi/responses_compact_npm_test.go checks it.
import OpenAI from 'openai';
import {
  Agent, run, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, OpenAIResponsesCompactionSession,
} from '@openai/agents';

setTracingDisabled(true);
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
setDefaultOpenAIClient(client);
setOpenAIAPI('responses');
const model = 'gpt-4o-mini';
const out = {};

// The raw SDK: compact a chain, then send the compacted items back with a new question.
{
  const first = await client.responses.create({ model, input: 'My name is Ada and my number is 42.' });
  const c = await client.responses.compact({ model, previous_response_id: first.id });
  const next = await client.responses.create({
    model, input: [...c.output, { role: 'user', content: 'What is my number?' }],
  });
  out.sdk = {
    object: c.object, id: c.id, types: c.output.map((o) => o.type), sealed: c.output.at(-1).encrypted_content,
    usage: c.usage.total_tokens, answer: next.output_text,
  };
  try {
    await client.responses.compact({ model });
    out.sdk.missing = 'accepted';
  } catch (err) {
    out.sdk.missing = `${err.status} ${err.param}`;
  }
}

// The Agents SDK's compaction session: two turns, a forced compaction of the session's items, a third turn.
{
  const agent = new Agent({ name: 'helper', instructions: 'You help.', model });
  const session = new OpenAIResponsesCompactionSession({ client, model, compactionMode: 'input' });
  await run(agent, 'My name is Ada.', { session });
  await run(agent, 'My number is 42.', { session });
  const result = await session.runCompaction({ force: true });
  const items = await session.getItems();
  const r = await run(agent, 'What is my number?', { session });
  out.session = {
    compacted: result !== null, usage: result?.usage?.totalTokens ?? 0,
    types: items.map((i) => (i.type === 'message' ? `message:${i.role}` : i.type)), final: r.finalOutput,
  };
}

process.stdout.write(JSON.stringify(out));
