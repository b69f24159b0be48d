package platform

import (
	mcpclient "github.com/contrailhq/contrail/internal/mcp/client"
)

// assembleMCP makes the node's MCP client (the Responses API's mcp tool): it calls the servers of --mcp-hosts and
// no others.
func (p *Platform) assembleMCP() error {
	hosts, err := mcpclient.ParseHosts(p.Config.MCPHosts)
	if err != nil {
		return err
	}
	p.MCP = mcpclient.New(hosts, mcpclient.WithLogger(p.Logger.With("component", "mcp-client")))
	return nil
}
