// Drives the OpenAI Agents SDK 0.20.0 over MCP both ways against a Contrail node: Contrail's /mcp as the agent's
// MCP server (MCPServerStreamableHttp: its tools listed and called by the SDK), and a hosted MCP tool
// (hostedMcpTool) that Contrail's responses call, held for approval and approved through the run's state. It prints
// one JSON object of what it saw; agents_mcp_test.go checks it. OPENAI_BASE_URL, OPENAI_API_KEY, CONTRAIL_MCP_URL
// and MCP_URL (a Go MCP server on loopback) come from the environment.
import OpenAI from 'openai';
import { Agent, run, hostedMcpTool, MCPServerStreamableHttp, setDefaultOpenAIClient, setTracingDisabled } from '@openai/agents';

setTracingDisabled(true);
setDefaultOpenAIClient(new OpenAI({ maxRetries: 0 }));
const model = 'gpt-4o-mini';
const out = {};

// Contrail as the agent's MCP server: the account's task is one of the agent's tools.
const contrail = new MCPServerStreamableHttp({
  name: 'contrail', url: process.env.CONTRAIL_MCP_URL, cacheToolsList: true,
  requestInit: { headers: { Authorization: `Bearer ${process.env.OPENAI_API_KEY}` } },
});
await contrail.connect();
try {
  const doubler = new Agent({ name: 'Doubler', instructions: 'Use your tools.', model, mcpServers: [contrail] });
  const r = await run(doubler, 'Double 21.');
  out.client = {
    tools: (await contrail.listTools()).map((t) => t.name),
    final: r.finalOutput,
    items: r.newItems.map((i) => i.type),
  };
} finally {
  await contrail.close();
}

// Contrail as the MCP client: a hosted tool that needs approval interrupts the run; approved, the run goes on.
const adder = new Agent({
  name: 'Adder', instructions: 'Use your tools.', model,
  tools: [hostedMcpTool({ serverLabel: 'calc', serverUrl: process.env.MCP_URL, requireApproval: 'always' })],
});
let r = await run(adder, 'Add 20 and 22.');
out.interruptions = r.interruptions.map((i) => ({ type: i.type, name: i.name ?? i.rawItem?.name ?? null }));
for (const i of r.interruptions) r.state.approve(i);
r = await run(adder, r.state);
out.hosted = {
  final: r.finalOutput,
  items: r.newItems.map((i) => ({ type: i.type, raw: i.rawItem?.type ?? null, output: i.rawItem?.output ?? null })),
};
console.log(JSON.stringify(out));
