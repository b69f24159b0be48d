// Drives the Responses API's WebSocket mode on a Contrail node (OPENAI_BASE_URL, OPENAI_API_KEY): openai 7.x's
// ResponsesWS with its lane helper (ResponsesWebSocketSession), several responses on one socket, and the Agents
// SDK 0.20.0 with setOpenAIResponsesTransport('websocket'). It prints one JSON object of what each saw;
// internal/openaiapi/responses_ws_test.go checks it. Tracing is off, so nothing leaves the machine.
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { ResponsesWebSocketSession } from 'openai/lib/responses/responses-websocket-session';
import {
  Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setOpenAIResponsesTransport, setTracingDisabled,
} from '@openai/agents';
import { z } from 'zod';

setTracingDisabled(true);
// The requests the client makes over HTTP, counted: the Agents SDK's runs must make none.
const httpRequests = [];
const client = new OpenAI({
  baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY, maxRetries: 0,
  fetch: (url, init) => { httpRequests.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`); return fetch(url, init); },
});
const model = 'gpt-4o-mini';
const out = {};

const weatherFn = {
  type: 'function', name: 'get_weather', description: 'The weather in a city', strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

// Every event the socket brings, in order, by response: a response's events are those from its response.created.
const ws = new ResponsesWS(client);
const seen = [];
ws.on('event', (ev) => seen.push({ type: ev.type, stream_id: ev.stream_id, seq: ev.sequence_number }));
const socketErrors = [];
ws.on('error', (err) => socketErrors.push(err.message));
// The lane helper sends on the socket itself: it waits for the socket to be open.
await new Promise((resolve, reject) => {
  ws.socket.once('open', resolve);
  ws.socket.once('close', (code, reason) => reject(new Error(`socket closed before opening: ${code} ${reason}`)));
});
const session = new ResponsesWebSocketSession(ws, { maxLanes: 4, maxBufferedEvents: 10000, maxBufferedBytes: 1 << 24 });
const lane = session.lane();

// respond sends one request on a lane and gives its final response, with the types of the events it saw.
async function respond(l, request) {
  const from = seen.length;
  l.create(request);
  const r = await l.finalResponse();
  return { r, types: seen.slice(from).map((e) => e.type), streamIDs: [...new Set(seen.slice(from).map((e) => e.stream_id))] };
}

// failure sends one request (or raw data) and gives the error event the lane throws.
async function failure(send) {
  send();
  try {
    const r = await lane.finalResponse();
    return { unexpected: r.id };
  } catch (err) {
    const e = err.error ?? {};
    return { message: err.message, status: e.status, type: e.error?.type, param: e.error?.param, detail: e.error?.message };
  }
}

{
  const first = await respond(lane, { model, input: 'My name is Ada.' });
  const second = await respond(lane, { model, input: 'What is my name?', previous_response_id: first.r.id });
  out.two = [first, second].map(({ r, types }) => ({ id: r.id, status: r.status, text: r.output_text, previous: r.previous_response_id, types }));
}
{
  const call = await respond(lane, { model, input: 'weather in Oslo?', tools: [weatherFn] });
  const fc = call.r.output.find((o) => o.type === 'function_call');
  const answer = await respond(lane, {
    model, tools: [weatherFn], previous_response_id: call.r.id,
    input: [{ type: 'function_call_output', call_id: fc.call_id, output: 'sunny' }],
  });
  out.tool = { call: { name: fc.name, arguments: fc.arguments, call_id: fc.call_id, types: call.types }, text: answer.r.output_text, types: answer.types };
}
{
  // A request on a lane of its own: every event of its response says so.
  const other = session.lane('lane-b');
  const r = await respond(other, { model, input: 'on lane b' });
  out.lane = { text: r.r.output_text, streamIDs: r.streamIDs };
}
{
  // Requests the node cannot serve are answered with an error event, and the socket serves the next one.
  out.badField = await failure(() => lane.create({ model: 42, input: 'x' }));
  out.badJSON = await failure(() => ws.sendRaw('{"type": "response.create", '));
  out.badType = await failure(() => ws.send({ type: 'response.bogus' }));
  out.notFound = await failure(() => lane.create({ model, input: 'x', previous_response_id: 'resp_01ARZ3NDEKTSV4RRFFQ69G5FAV' }));
  const after = await respond(lane, { model, input: 'still there?' });
  out.after = { text: after.r.output_text, status: after.r.status };
}
session.close();
ws.close();
out.socketErrors = socketErrors;

// The Agents SDK over its WebSocket transport: a run with a function tool, and a streamed one. It needs a global
// WebSocket that sends headers: Node 22's, or ws's on Node 20 (which has none without a flag).
// The sockets it opens are listed by URL.
const BaseWebSocket = globalThis.WebSocket ?? (await import('ws')).WebSocket;
const agentSockets = [];
globalThis.WebSocket = class extends BaseWebSocket {
  constructor(url, ...rest) {
    super(url, ...rest);
    agentSockets.push(String(url));
  }
};
setDefaultOpenAIClient(client);
setOpenAIAPI('responses');
setOpenAIResponsesTransport('websocket');
const getWeather = tool({
  name: 'get_weather', description: 'The weather in a city',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `sunny in ${city}`,
});
const helper = new Agent({ name: 'Helper', instructions: 'You help.', model, tools: [getWeather] });
{
  const r = await run(helper, 'What is the weather in Oslo?');
  out.agentRun = r.finalOutput;
}
{
  const r = await run(helper, 'Stream: the weather in Bergen?', { stream: true });
  let text = '';
  for await (const chunk of r.toTextStream()) text += chunk;
  await r.completed;
  out.agentStreamed = { final: r.finalOutput, text };
}
out.agentSockets = agentSockets;
out.agentHTTP = httpRequests;
// The Agents SDK keeps its socket for the next run: the program ends once its answer is written.
process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));
