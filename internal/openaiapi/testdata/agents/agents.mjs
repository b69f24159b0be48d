// Drives OpenAI's npm SDK 7.x (responses.stream(), retrieve(id, {stream: true})) and the OpenAI Agents SDK 0.20.0
// against a Contrail node: OPENAI_BASE_URL and OPENAI_API_KEY point them at it. Tracing is off, so nothing leaves
// the machine. It prints one JSON object of what each saw; internal/openaiapi/responses_npm_test.go checks it.
import OpenAI from 'openai';
import {
  Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled, OpenAIConversationsSession,
} from '@openai/agents';
import { z } from 'zod';

setTracingDisabled(true);
const client = new OpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0 });
setDefaultOpenAIClient(client);
setOpenAIAPI('responses');
const model = 'gpt-4o-mini';
const out = {};

async function collect(stream) {
  const types = [];
  for await (const ev of stream) types.push(ev.type);
  return types;
}

// responses.stream(): its accumulator throws on any event out of order or unknown.
const weatherFn = {
  type: 'function', name: 'get_weather', description: 'The weather in a city', strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
{
  const s = client.responses.stream({ model, input: 'stream please' });
  const events = await collect(s);
  const final = await s.finalResponse();
  out.stream = { events, text: final.output_text, id: final.id };
  const replay = await client.responses.retrieve(final.id, { stream: true });
  out.replay = await collect(replay);
}
{
  const s = client.responses.stream({ model, input: 'weather in Oslo?', tools: [weatherFn] });
  const events = await collect(s);
  const final = await s.finalResponse();
  out.functionStream = { events, output: final.output.map((o) => ({ type: o.type, name: o.name, arguments: o.arguments, call_id: o.call_id })) };
}

// The Agents SDK: a function tool, a streamed run, a handoff, an output type, a conversations session.
const getWeather = tool({
  name: 'get_weather', description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});
const helper = new Agent({ name: 'Helper', instructions: 'You help.', model, tools: [getWeather] });
{
  const r = await run(helper, 'What is the weather in Oslo?');
  out.functionRun = r.finalOutput;
}
{
  const r = await run(helper, 'Stream: the weather in Bergen?', { stream: true });
  let text = '';
  for await (const chunk of r.toTextStream()) text += chunk;
  await r.completed;
  out.streamedRun = { final: r.finalOutput, text };
}
{
  const spanish = new Agent({ name: 'Spanish', instructions: 'You answer in Spanish.', model, handoffDescription: 'Spanish speakers' });
  const triage = new Agent({ name: 'Triage', instructions: 'Hand Spanish speakers over.', model, handoffs: [spanish] });
  const r = await run(triage, 'Hola, necesito ayuda');
  out.handoff = { final: r.finalOutput, last: r.lastAgent.name };
}
{
  const typed = new Agent({ name: 'Typed', instructions: 'Give the weather as JSON.', model,
    outputType: z.object({ city: z.string(), temp: z.number() }) });
  const r = await run(typed, 'Weather as JSON for Oslo');
  out.typed = r.finalOutput;
}
{
  const session = new OpenAIConversationsSession({ client });
  await run(helper, 'My name is Ada.', { session });
  const r = await run(helper, 'What is my name?', { session });
  const items = await session.getItems();
  out.session = { final: r.finalOutput, id: await session.getSessionId(), items: items.length };
}
console.log(JSON.stringify(out));
