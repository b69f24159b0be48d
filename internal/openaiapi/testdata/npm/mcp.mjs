// Drives openai-node 7.x's responses.stream() over a response with an mcp tool: the SDK's stream helper
// accumulates the events and rejects ones it does not know, so the event names are checked by the client itself.
// It prints one JSON object of what it saw; responses_mcp_test.go checks it. OPENAI_BASE_URL, OPENAI_API_KEY and
// MCP_URL (a Go MCP server on loopback) come from the environment.
import OpenAI from 'openai7';

const client = new OpenAI({ maxRetries: 0 });
const out = { events: [] };
const stream = client.responses.stream({
  model: 'gpt-4o-mini',
  input: 'add 20 and 22',
  tools: [{ type: 'mcp', server_label: 'calc', server_url: process.env.MCP_URL, require_approval: 'never' }],
});
stream.on('event', (e) => out.events.push(e.type));
const final = await stream.finalResponse();
out.output = final.output.map((it) => ({ type: it.type, name: it.name ?? null, output: it.output ?? null }));
out.text = final.output_text;
console.log(JSON.stringify(out));
