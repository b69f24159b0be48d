// Drives the official MCP npm SDK's client (@modelcontextprotocol/sdk, Client + StreamableHTTPClientTransport)
// against a Contrail node's /mcp, as a desktop assistant would. It prints one JSON object of what it saw;
// npm_test.go checks it. MCP_URL (<node>/mcp), MCP_KEY_A and MCP_KEY_B (two accounts' keys) come from the
// environment.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.env.MCP_URL);

async function connect(key) {
  const client = new Client({ name: 'contrail-npm-test', version: '1.0.0' });
  const headers = key ? { Authorization: `Bearer ${key}` } : {};
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  await client.connect(transport);
  return client;
}

function texts(result) {
  return (result.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

async function callSafely(client, name, args) {
  try {
    const r = await client.callTool({ name, arguments: args });
    return { isError: !!r.isError, text: texts(r), structured: r.structuredContent ?? null };
  } catch (e) {
    return { protocolError: String(e.message || e), code: e.code ?? null };
  }
}

const out = {};
const a = await connect(process.env.MCP_KEY_A);
out.server = a.getServerVersion();
out.capabilities = a.getServerCapabilities();
const tools = (await a.listTools()).tools;
out.tools = tools.map((t) => t.name);
out.doubleSchema = tools.find((t) => t.name === 'task_double')?.inputSchema ?? null;
out.ask = await callSafely(a, 'ask_fixie', { query: 'Hello from npm' });
out.askGreeter = await callSafely(a, 'ask_greeter', { query: 'Generate a random number between 3 and 7.' });
out.task = await callSafely(a, 'task_double', { n: 5 });
out.taskWaits = await callSafely(a, 'task_ask_me', {});
out.errors = {
  missingQuery: await callSafely(a, 'ask_fixie', {}),
  badN: await callSafely(a, 'task_double', { n: 'five' }),
  missingN: await callSafely(a, 'task_double', {}),
  unknownTool: await callSafely(a, 'ask_nobody', { query: 'x' }),
};
out.templates = (await a.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate);
if (out.ask.structured?.session) {
  const r = await a.readResource({ uri: `contrail://sessions/${out.ask.structured.session}` });
  out.transcript = r.contents[0].text;
}
await a.close();

const b = await connect(process.env.MCP_KEY_B);
out.toolsB = (await b.listTools()).tools.map((t) => t.name);
out.bCallsA = {
  greeter: await callSafely(b, 'ask_greeter', { query: 'hello' }),
  task: await callSafely(b, 'task_double', { n: 1 }),
};
if (out.ask.structured?.session) {
  try {
    await b.readResource({ uri: `contrail://sessions/${out.ask.structured.session}` });
    out.bReadsA = 'read';
  } catch (e) {
    out.bReadsA = { error: String(e.message || e) };
  }
}
await b.close();

for (const [name, key] of [['noKey', ''], ['wrongKey', 'ctr_wrong']]) {
  try {
    const c = await connect(key);
    await c.close();
    out[name] = 'connected';
  } catch (e) {
    out[name] = { error: String(e.message || e), code: e.code ?? null };
  }
}
console.log(JSON.stringify(out));
