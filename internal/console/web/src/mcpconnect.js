// ConnectMCP shows how a desktop assistant or an IDE (Claude Desktop, Cursor, VS Code) reaches this account's agents,
// Julep tasks and vector stores as MCP tools: the server is /mcp, streamable HTTP, with the API key as a Bearer
// token (internal/mcp/server). The snippet carries a placeholder, never the key itself.
import { html } from './ui.js';

export function ConnectMCP() {
  const url = `${location.origin}/mcp`;
  const config = JSON.stringify({
    mcpServers: {
      contrail: { type: 'http', url, headers: { Authorization: 'Bearer <your Contrail API key>' } },
    },
  }, null, 2);
  return html`<section class="card" aria-labelledby="mcp-h">
    <h2 id="mcp-h">Connect a desktop client (MCP)</h2>
    <p>Your agents (<code>ask_&lt;handle&gt;</code>), Julep tasks and vector store searches are MCP tools at <code id="mcp-url">${url}</code>. Add this to your client's MCP configuration:</p>
    <pre class="text" id="mcp-config">${config}</pre>
  </section>`;
}
