// Drives the OpenAI Agents SDK 0.20.0's hosted tools and server-side state against a Contrail node: fileSearchTool
// over a vector store, codeInterpreterTool in an auto container (streamed, so the SDK's stream handling reads the
// code_interpreter events), a follow-up run chained with previousResponseId, and a run in a conversation made with
// the client (conversationId). It prints one JSON object of what it saw; agents_hosted_test.go checks it.
// OPENAI_BASE_URL, OPENAI_API_KEY, STORE_ID and CSV_ID come from the environment; CODE=1 runs the code part.
import OpenAI from 'openai';
import { Agent, run, fileSearchTool, codeInterpreterTool, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';

setTracingDisabled(true);
const client = new OpenAI({ maxRetries: 0 });
setDefaultOpenAIClient(client);
const model = 'gpt-4o-mini';
const out = {};
const raw = (items) => items.map((i) => i.rawItem?.type ?? i.type);

const searcher = new Agent({ name: 'Searcher', instructions: 'Search the manual.', model,
  tools: [fileSearchTool(process.env.STORE_ID, { maxNumResults: 2, includeSearchResults: true })] });
let r = await run(searcher, 'How do I descale?');
const call = r.newItems.find((i) => i.rawItem?.type === 'hosted_tool_call')?.rawItem;
out.search = { final: r.finalOutput, items: raw(r.newItems), call: call?.name ?? null, status: call?.status ?? null,
  responseId: r.lastResponseId };

// Chained on the server: the follow-up sends only its own input.
r = await run(searcher, 'And how often?', { previousResponseId: out.search.responseId });
out.chained = { final: r.finalOutput, responseId: r.lastResponseId };

// In a conversation: the SDK sends the conversation's ID, and the items land in it.
const conv = await client.conversations.create({});
await run(searcher, 'What does the manual cover?', { conversationId: conv.id });
const items = await client.conversations.items.list(conv.id, { order: 'asc' });
out.conversation = { items: items.data.map((i) => i.type) };

if (process.env.CODE === '1') {
  const coder = new Agent({ name: 'Coder', instructions: 'Use Python.', model,
    tools: [codeInterpreterTool({ container: { type: 'auto', file_ids: [process.env.CSV_ID] }, includeOutputs: true })] });
  const s = await run(coder, 'Total sales?', { stream: true });
  const events = new Set();
  for await (const ev of s) {
    if (ev.type === 'raw_model_stream_event') events.add(ev.data.type === 'model' ? ev.data.event?.type : ev.data.type);
  }
  await s.completed;
  const ci = s.newItems.find((i) => i.rawItem?.type === 'hosted_tool_call')?.rawItem;
  out.code = { final: s.finalOutput, items: raw(s.newItems), call: ci?.name ?? null, status: ci?.status ?? null,
    events: [...events].filter(Boolean).sort() };
}
console.log(JSON.stringify(out));
