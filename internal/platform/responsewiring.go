package platform

import "github.com/contrailhq/contrail/handlers/responder"

// responseExecutors are the server-side tools the Responses API's model loop runs on this node, by tool type: the
// seam where a tool kind (file_search, code_interpreter, mcp) plugs in.
func (p *Platform) responseExecutors() map[string]responder.Executor {
	return map[string]responder.Executor{}
}

// responseTools are the server-side tool types the /v1 face accepts in a response's tools.
func (p *Platform) responseTools() map[string]bool {
	out := map[string]bool{}
	for typ := range p.responseExecutors() {
		out[typ] = true
	}
	return out
}
