package platform

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/responder"
	"github.com/contrailhq/contrail/internal/compaction"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm"
	mcpclient "github.com/contrailhq/contrail/internal/mcp/client"
	"github.com/contrailhq/contrail/internal/natsx"
)

// mcpSecretsBucket holds the key material the mcp tool's headers are sealed with, made on a deployment's first start.
const mcpSecretsBucket = "mcp_secrets"

// assembleMCP makes the node's MCP client (the Responses API's mcp tool): it calls the servers of --mcp-hosts and
// no others; and the sealer of the tool's headers.
func (p *Platform) assembleMCP(ctx context.Context) error {
	hosts, err := mcpclient.ParseHosts(p.Config.MCPHosts)
	if err != nil {
		return err
	}
	p.MCP = mcpclient.New(hosts, mcpclient.WithLogger(p.Logger.With("component", "mcp-client")))
	if err := natsx.EnsureBucket(ctx, p.JS, p.Layout, natsx.BucketSpec{Name: mcpSecretsBucket,
		Description: "The key material the mcp tool's headers are sealed with"}); err != nil {
		return err
	}
	kv, err := p.JS.KeyValue(ctx, p.Layout.Names.Bucket(mcpSecretsBucket))
	if err != nil {
		return fmt.Errorf("open %s: %w", mcpSecretsBucket, err)
	}
	material := make([]byte, 32)
	_, _ = rand.Read(material)
	// The first node to start makes the material; every other one reads it.
	if _, err := kv.Create(ctx, "headers", material); err != nil && !errors.Is(err, jetstream.ErrKeyExists) {
		return fmt.Errorf("make the mcp sealing key: %w", err)
	}
	e, err := kv.Get(ctx, "headers")
	if err != nil {
		return fmt.Errorf("read the mcp sealing key: %w", err)
	}
	if p.mcpSeal, err = mcpclient.NewSealer(e.Value(), p.Config.SigningSecret); err != nil {
		return err
	}
	// The compaction summaries' key is derived from the same deployment-wide material under its own label
	// (internal/compaction): every node opens what any node sealed, and neither key opens the other's boxes.
	p.compactSeal, err = compaction.NewSealer(e.Value(), p.Config.SigningSecret)
	return err
}

// mcpServers is the /v1 face's view of the MCP client: the allow-list check and the headers' sealing.
type mcpServers struct{ p *Platform }

func (m mcpServers) Check(field, serverURL string) error { return m.p.MCP.Check(field, serverURL) }

func (m mcpServers) SealHeaders(account, serverURL string, h map[string]string) (string, error) {
	return m.p.mcpSeal.Seal(h, account, serverURL)
}

// responseMCP runs a response's mcp tools: it lists a server's tools once per context (the mcp_list_tools item,
// which a follow-up finds in its history), offers the allowed ones to the model, and calls them, or asks for the
// user's approval first when require_approval says so.
type responseMCP struct{ p *Platform }

func (responseMCP) ItemType() string { return "mcp_call" }

func (responseMCP) Offer(events.ResponseTool) (llm.Tool, bool) { return llm.Tool{}, false }

func (responseMCP) Output(it events.Item) string { return responder.MCPOutput(it) }

// listed is the last list of the server's tools in the context, if any.
func listed(label string, context []events.Item) (events.Item, bool) {
	for i := len(context) - 1; i >= 0; i-- {
		if it := context[i]; it.Type == "mcp_list_tools" && it.ServerLabel == label {
			return it, true
		}
	}
	return events.Item{}, false
}

// names reads allowed_tools or a require_approval branch: a list of names or {tool_names}; nil when not given.
func names(raw json.RawMessage) []string {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var o struct {
		ToolNames []string `json:"tool_names"`
	}
	_ = json.Unmarshal(raw, &o)
	if o.ToolNames == nil {
		return []string{}
	}
	return o.ToolNames
}

func (responseMCP) OfferAll(t events.ResponseTool, context []events.Item) []llm.Tool {
	list, ok := listed(t.ServerLabel, context)
	if !ok || list.Error != "" {
		return nil
	}
	var tools []mcpclient.Tool
	_ = json.Unmarshal(list.Tools, &tools)
	allowed := names(t.AllowedTools)
	var out []llm.Tool
	for _, tool := range tools {
		if allowed != nil && !slices.Contains(allowed, tool.Name) {
			continue // never offered to the model
		}
		out = append(out, llm.Tool{Name: tool.Name, Description: tool.Description, Parameters: tool.InputSchema})
	}
	return out
}

// needsApproval says whether a call of name waits for the user: require_approval "always" (OpenAI's default), or
// an object that does not list it under never (or lists it under always).
func needsApproval(raw json.RawMessage, name string) bool {
	raw = json.RawMessage(strings.TrimSpace(string(raw)))
	if len(raw) == 0 || string(raw) == "null" {
		return true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s != "never"
	}
	var o struct {
		Always json.RawMessage `json:"always"`
		Never  json.RawMessage `json:"never"`
	}
	_ = json.Unmarshal(raw, &o)
	if slices.Contains(names(o.Always), name) {
		return true
	}
	return !slices.Contains(names(o.Never), name)
}

// server is the tool's server with its headers, opened for the response's account and the tool's server_url only.
func (x responseMCP) server(account string, t events.ResponseTool) (mcpclient.Server, error) {
	h, err := x.p.mcpSeal.Open(t.SealedHeaders, account, t.ServerURL)
	return mcpclient.Server{URL: t.ServerURL, Headers: h}, err
}

func (x responseMCP) Prepare(ctx context.Context, s response.State, t events.ResponseTool, context []events.Item, itemID func(int, string) string,
	start func(events.Item) error) ([]events.Item, response.End) {
	var items []events.Item
	srv, err := x.server(s.Account, t)
	if _, ok := listed(t.ServerLabel, context); !ok {
		it := events.Item{Type: "mcp_list_tools", ID: itemID(0, "mcpl_"), ServerLabel: t.ServerLabel, Tools: json.RawMessage(`[]`)}
		var tools []mcpclient.Tool
		if err == nil {
			tools, err = x.p.MCP.ListTools(ctx, srv)
		}
		if err != nil {
			it.Error = errs.MessageOf(err)
			x.p.Logger.Warn("mcp: list tools failed", "response", s.ID, "server", t.ServerLabel, "err", it.Error)
			return []events.Item{it}, response.End{Status: events.ResponseStatusFailed, Code: "server_error",
				Message: fmt.Sprintf("Error retrieving tool list from MCP server '%s': %s", t.ServerLabel, it.Error)}
		}
		if tools == nil {
			tools = []mcpclient.Tool{}
		}
		it.Tools, _ = json.Marshal(tools)
		items = append(items, it)
	}
	// The calls the user approved in this response's input run now, once each.
	for _, in := range s.Request.Input {
		if in.Type != "mcp_approval_response" || in.Approve == nil || !*in.Approve {
			continue
		}
		var req events.Item
		for _, c := range context {
			if c.Type == "mcp_approval_request" && c.ID == in.ApprovalRequestID && c.ServerLabel == t.ServerLabel {
				req = c
			}
		}
		if req.ID == "" || slices.ContainsFunc(s.Output, func(o events.Item) bool { return o.ApprovalRequestID == req.ID }) {
			continue
		}
		call := events.Item{Type: "mcp_call", ID: itemID(len(items), "mcp_"), ServerLabel: t.ServerLabel, Name: req.Name,
			Arguments: req.Arguments, ApprovalRequestID: req.ID}
		// Recorded as started before it is made: after a crash it is not made again.
		if start(call) != nil {
			return nil, response.End{}
		}
		items = append(items, x.call(ctx, srv, err, call))
	}
	return items, response.End{}
}

// Started is the call Run makes, recorded before it is made; none when it asks for approval instead.
func (responseMCP) Started(t events.ResponseTool, c llm.ToolCall, itemID string) (events.Item, bool) {
	if needsApproval(t.RequireApproval, c.Name) {
		return events.Item{}, false
	}
	return events.Item{Type: "mcp_call", ID: itemID, ServerLabel: t.ServerLabel, Name: c.Name, Arguments: mcpArguments(c)}, true
}

// mcpArguments are a call's arguments as sent: none is {}.
func mcpArguments(c llm.ToolCall) string {
	if strings.TrimSpace(c.Arguments) == "" {
		return "{}"
	}
	return c.Arguments
}

func (x responseMCP) Run(ctx context.Context, s response.State, t events.ResponseTool, c llm.ToolCall, itemID string) (events.Item, error) {
	args := mcpArguments(c)
	if needsApproval(t.RequireApproval, c.Name) {
		return events.Item{Type: "mcp_approval_request", ID: "mcpr_" + strings.TrimPrefix(itemID, "mcp_"), ServerLabel: t.ServerLabel,
			Name: c.Name, Arguments: args}, nil
	}
	srv, err := x.server(s.Account, t)
	it := x.call(ctx, srv, err, events.Item{Type: "mcp_call", ID: itemID, ServerLabel: t.ServerLabel, Name: c.Name, Arguments: args})
	if it.Error != "" {
		return it, errors.New(it.Error)
	}
	return it, nil
}

// call makes one call and records its output, or its error (a timeout, a server that failed, a tool that said it
// failed): the model reads either on its next turn.
func (x responseMCP) call(ctx context.Context, srv mcpclient.Server, opened error, it events.Item) events.Item {
	it.Status = events.ResponseStatusCompleted
	err := opened
	var res mcpclient.Result
	if err == nil {
		res, err = x.p.MCP.CallTool(ctx, srv, it.Name, json.RawMessage(it.Arguments))
	}
	switch {
	case err != nil:
		it.Status, it.Error = events.ResponseStatusFailed, errs.MessageOf(err)
	case res.IsError:
		it.Status, it.Error = events.ResponseStatusFailed, res.Output
	default:
		it.Output, _ = json.Marshal(res.Output)
	}
	return it
}
