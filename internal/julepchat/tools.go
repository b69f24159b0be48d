package julepchat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/workflow"
)

// Tool types.
const (
	ToolFunction    = "function"
	ToolSystem      = "system"
	ToolAPICall     = "api_call"
	ToolIntegration = "integration"
)

// SystemOp is a system tool operation this server runs: on which resource, and what the model passes it.
type SystemOp struct {
	// Key is "resource[.subresource].operation" ("agent.doc.search").
	Key        string
	Parameters json.RawMessage
}

const (
	searchParams = `{"type":"object","properties":{"text":{"type":"string","description":"What to search the docs for"},"limit":{"type":"integer","description":"How many docs to return (1-50, default 10)"}},"required":["text"]}`
	listParams   = `{"type":"object","properties":{"limit":{"type":"integer","description":"How many docs to return (1-100, default 20)"}}}`
	noParams     = `{"type":"object","properties":{}}`
)

// systemOps are the system operations a tool may name: searching and listing an agent's or a user's docs, reading
// the agent or user, and reading the session's history.
var systemOps = map[string]SystemOp{
	"agent.doc.search": {Parameters: json.RawMessage(searchParams)},
	"user.doc.search":  {Parameters: json.RawMessage(searchParams)},
	"agent.doc.list":   {Parameters: json.RawMessage(listParams)},
	"user.doc.list":    {Parameters: json.RawMessage(listParams)},
	"agent.get":        {Parameters: json.RawMessage(noParams)},
	"user.get":         {Parameters: json.RawMessage(noParams)},
	"session.history":  {Parameters: json.RawMessage(noParams)},
}

// SystemOpOf finds the operation a system tool names.
func SystemOpOf(d events.JulepSystemDef) (SystemOp, bool) {
	key := d.Resource
	if d.Subresource != "" {
		key += "." + d.Subresource
	}
	key += "." + d.Operation
	op, ok := systemOps[key]
	op.Key = key
	return op, ok
}

// SystemOps lists the operations this server runs, for error messages.
func SystemOps() []string { return slices.Sorted(maps.Keys(systemOps)) }

var toolNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Tool limits.
const (
	maxToolDescription = 1024
	maxToolSchema      = 64 << 10
	maxToolHeaders     = 32
)

// CheckTool checks a tool a client defines (on an agent or in a chat), naming the field at fault from field on
// ("tools[0]"). Integrations and Anthropic's computer-use tools are refused with a 400 that says so: this server
// does not run them yet.
func CheckTool(field string, t events.JulepTool, hosts apicall.Hosts) error {
	if !toolNameRE.MatchString(t.Name) {
		return errs.InvalidField(field+".name", "%s.name must be 1 to 64 letters, digits, '_' or '-' (the name the model calls the tool by)", field)
	}
	if len(t.Description) > maxToolDescription {
		return errs.InvalidField(field+".description", "%s.description has %d bytes; at most %d are allowed", field, len(t.Description), maxToolDescription)
	}
	switch t.Type {
	case ToolFunction:
		if t.Function == nil {
			return errs.InvalidField(field+".function", "a function tool needs %s.function", field)
		}
		return checkSchema(field+".function.parameters", t.Function.Parameters)
	case ToolSystem:
		if t.System == nil {
			return errs.InvalidField(field+".system", "a system tool needs %s.system", field)
		}
		if _, ok := SystemOpOf(*t.System); !ok {
			return errs.E(errs.Invalid, "%s.system: %s.%s%s is not a system operation this server runs; it runs %s",
				field, t.System.Resource, subresource(t.System), t.System.Operation, strings.Join(SystemOps(), ", "))
		}
		return checkObject(field+".system.arguments", t.System.Arguments)
	case ToolAPICall:
		return checkAPICall(field+".api_call", t.APICall, hosts)
	case ToolIntegration:
		return errs.E(errs.Invalid, "%s: integration tools are not supported by this server yet; define a function tool and run it in your program, or an api_call tool", field)
	case "computer_20241022", "text_editor_20241022", "bash_20241022":
		return errs.E(errs.Invalid, "%s: %s tools are not supported by this server", field, t.Type)
	case "":
		return errs.Missing(field + ".type")
	}
	return errs.InvalidField(field+".type", "%s.type must be function, system, api_call or integration", field)
}

func subresource(d *events.JulepSystemDef) string {
	if d.Subresource == "" {
		return ""
	}
	return d.Subresource + "."
}

func checkAPICall(field string, d *events.JulepAPICallDef, hosts apicall.Hosts) error {
	if d == nil {
		return errs.InvalidField(field, "an api_call tool needs %s", field)
	}
	switch strings.ToUpper(d.Method) {
	case "GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS":
	default:
		return errs.InvalidField(field+".method", "%s.method must be GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS", field)
	}
	if len(d.Headers) > maxToolHeaders {
		return errs.InvalidField(field+".headers", "%s.headers holds more than %d headers", field, maxToolHeaders)
	}
	if err := checkSchema(field+".params_schema", d.ParamsSchema); err != nil {
		return err
	}
	if err := checkObject(field+".json", d.JSON); err != nil {
		return err
	}
	if err := checkObject(field+".params", d.Params); err != nil {
		return err
	}
	if d.Timeout < 0 {
		return errs.InvalidField(field+".timeout", "%s.timeout must not be negative", field)
	}
	return hosts.Check(field+".url", d.URL)
}

func checkSchema(field string, raw json.RawMessage) error {
	if len(raw) > maxToolSchema {
		return errs.InvalidField(field, "%s is %d bytes; at most %d are allowed", field, len(raw), maxToolSchema)
	}
	return checkObject(field, raw)
}

func checkObject(field string, raw json.RawMessage) error {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil
	}
	if t[0] != '{' || !json.Valid(t) {
		return errs.InvalidField(field, "%s must be a JSON object", field)
	}
	return nil
}

// Offered is a tool as the model is offered it: the function it calls, with the parameters the scope fixes taken
// out (partial application, x-tool-parameters), and what to put back into its calls.
type Offered struct {
	Tool  events.JulepTool
	Model llm.Tool
	// Fixed are the arguments the scope fixes: never asked of the model, always in the call.
	Fixed map[string]any
}

// Offer makes the tools the model is offered: each as a function, its parameters without the fixed ones.
func Offer(tools []events.JulepTool, params ToolParameters) []Offered {
	out := make([]Offered, 0, len(tools))
	for _, t := range tools {
		fixed := params.For(t)
		out = append(out, Offered{Tool: t, Fixed: fixed, Model: llm.Tool{Name: t.Name, Description: description(t),
			Parameters: withoutFixed(parameters(t), fixed)}})
	}
	return out
}

func description(t events.JulepTool) string {
	if t.Description != "" {
		return t.Description
	}
	if t.Function != nil {
		return t.Function.Description
	}
	return ""
}

// parameters is the JSON schema of what the model passes a tool.
func parameters(t events.JulepTool) json.RawMessage {
	switch {
	case t.Function != nil && len(t.Function.Parameters) > 0:
		return t.Function.Parameters
	case t.System != nil:
		if op, ok := SystemOpOf(*t.System); ok {
			return op.Parameters
		}
	case t.APICall != nil && len(t.APICall.ParamsSchema) > 0:
		return t.APICall.ParamsSchema
	}
	return json.RawMessage(noParams)
}

// withoutFixed takes the fixed parameters out of a JSON schema's properties and required list.
func withoutFixed(schema json.RawMessage, fixed map[string]any) json.RawMessage {
	if len(fixed) == 0 {
		return schema
	}
	var s map[string]any
	if json.Unmarshal(schema, &s) != nil || s == nil {
		return schema
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k := range fixed {
			delete(props, k)
		}
	}
	if req, ok := s["required"].([]any); ok {
		kept := req[:0]
		for _, r := range req {
			if name, _ := r.(string); fixed[name] == nil {
				kept = append(kept, r)
			}
		}
		s["required"] = kept
	}
	out, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return out
}

// Complete puts the fixed arguments into a call's arguments (over whatever the model sent for them).
func (o Offered) Complete(args string) string {
	if len(o.Fixed) == 0 {
		return args
	}
	m := map[string]any{}
	_ = json.Unmarshal([]byte(args), &m)
	if m == nil {
		m = map[string]any{}
	}
	maps.Copy(m, o.Fixed)
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return string(out)
}

// ToolParameters are the x-tool-parameters of a chat's scope, merged by Julep's precedence (session over user over
// agent): by "<type>:<name>" ("function:check_account_status") a tool's fixed arguments, and bare names fixed for
// every tool that has a parameter of that name.
type ToolParameters struct {
	byTool map[string]map[string]any
	any    map[string]any
}

// XToolParameters is the metadata key that holds them.
const XToolParameters = "x-tool-parameters"

// MergeToolParameters reads the x-tool-parameters of each metadata, lowest precedence first.
func MergeToolParameters(metadata ...json.RawMessage) ToolParameters {
	p := ToolParameters{byTool: map[string]map[string]any{}, any: map[string]any{}}
	for _, raw := range metadata {
		var m map[string]json.RawMessage
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		var params map[string]any
		if json.Unmarshal(m[XToolParameters], &params) != nil {
			continue
		}
		for k, v := range params {
			if sub, ok := v.(map[string]any); ok && strings.Contains(k, ":") {
				if p.byTool[k] == nil {
					p.byTool[k] = map[string]any{}
				}
				maps.Copy(p.byTool[k], sub)
				continue
			}
			p.any[k] = v
		}
	}
	return p
}

// For is what the scope fixes of one tool: the bare names the tool has a parameter of, then its own entry.
func (p ToolParameters) For(t events.JulepTool) map[string]any {
	out := map[string]any{}
	if len(p.any) > 0 {
		var s struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(parameters(t), &s)
		for k, v := range p.any {
			if _, ok := s.Properties[k]; ok {
				out[k] = v
			}
		}
	}
	maps.Copy(out, p.byTool[t.Type+":"+t.Name])
	if len(out) == 0 {
		return nil
	}
	return out
}

// Names lists the tools' names, sorted, for the record of a prompt.
func Names(offered []Offered) []string {
	out := make([]string, len(offered))
	for i, o := range offered {
		out[i] = o.Tool.Name
	}
	sort.Strings(out)
	return out
}

// Find is the offered tool a call names.
func Find(offered []Offered, name string) (Offered, error) {
	for _, o := range offered {
		if o.Tool.Name == name {
			return o, nil
		}
	}
	return Offered{}, fmt.Errorf("the model called %q, which is not one of the tools it was offered", name)
}

// Runs reports whether the platform runs a tool (system and api_call tools); function tools are the client's.
func Runs(t events.JulepTool) bool { return t.Type == ToolSystem || t.Type == ToolAPICall }

// TemplateTool is a tool as templates see it (Julep's {type, name, function: {...}} and the tool's own fields): a
// tool the model is offered as a function is of type "function" there, so that Julep's default template, which
// lists function tools and refuses the rest, lists every tool the model may call.
func TemplateTool(o Offered) map[string]any {
	return map[string]any{
		"type": ToolFunction, "name": o.Tool.Name, "kind": o.Tool.Type, "description": o.Model.Description,
		"function": map[string]any{"name": o.Model.Name, "description": o.Model.Description, "parameters": o.Model.Parameters},
	}
}

// TaskTool is a task's tool as an agent's is defined (events.JulepTool), read from the task's source.
func TaskTool(t workflow.Tool) (events.JulepTool, error) {
	def := make(map[string]any, len(t.Def)+2)
	for k, v := range t.Def {
		def[k] = v
	}
	def["name"], def["type"] = t.Name, t.Type
	if t.Type == ToolFunction && def["function"] == nil {
		def["function"] = map[string]any{} // seed 004's `- function:` beside its name: a function of no parameters
	}
	if t.Description != "" {
		def["description"] = t.Description
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return events.JulepTool{}, err
	}
	var out events.JulepTool
	if err := json.Unmarshal(raw, &out); err != nil {
		return events.JulepTool{}, err
	}
	return out, nil
}
