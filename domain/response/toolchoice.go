package response

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

// ToolChoice is what a response's tool_choice asks of the model: Choice is a mode ("auto", "none", "required") or
// the name of the function the model must call (a server tool is called by its type's name), "" for the model's
// default; Allowed, for allowed_tools, names the tools the model may see (a function by its name, a server tool by
// its type, an mcp server's tools by AllowedKey).
type ToolChoice struct {
	Choice  string
	Allowed map[string]bool
}

// AllowedKey is how Allowed names a tool, as an allowed_tools entry names it: a function by its name, an mcp
// server's tools by its label ("mcp:<label>"), any other server tool by its type.
func AllowedKey(t events.ResponseTool) string {
	switch t.Type {
	case "function":
		return t.Name
	case "mcp":
		return "mcp:" + t.ServerLabel
	}
	return t.Type
}

// Lets reports whether the choice lets the model see tool t: every tool, unless it is allowed_tools. The model
// loop offers, and input_tokens counts, only what it lets through.
func (c ToolChoice) Lets(t events.ResponseTool) bool {
	return c.Allowed == nil || c.Allowed[AllowedKey(t)]
}

// ToolChoiceObject is tool_choice's object form.
type ToolChoiceObject struct {
	Type  string `json:"type"`
	Name  string `json:"name"`
	Mode  string `json:"mode"`
	Tools []struct {
		Type        string `json:"type"`
		Name        string `json:"name"`
		ServerLabel string `json:"server_label"`
	} `json:"tools"`
}

// ToolChoiceOf reads a response's tool_choice against its tools: "auto", "none", "required", {type: "function",
// name}, {type: "file_search" | "code_interpreter"}, or {type: "allowed_tools", mode, tools}. The face checks it
// with this when the response is made (an error names the field, with OpenAI's message), and the model loop reads
// it with this at each turn, so what is accepted is what the model gets. (The Assistants API's run tool_choice
// has its own shape: domain/thread.ToolChoiceOf.)
func ToolChoiceOf(raw json.RawMessage, tools []events.ResponseTool) (ToolChoice, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return ToolChoice{}, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		switch s {
		case "auto", "none", "required":
			return ToolChoice{Choice: s}, nil
		}
		return ToolChoice{}, errs.InvalidField("tool_choice", "Invalid value: '%s'. Supported values are: 'none', 'auto', and 'required'.", clip(s))
	}
	var o ToolChoiceObject
	if err := json.Unmarshal(raw, &o); err != nil {
		return ToolChoice{}, errs.InvalidField("tool_choice", "Invalid value for 'tool_choice': expected a string or an object.")
	}
	has := func(typ, name string) bool {
		return slices.ContainsFunc(tools, func(t events.ResponseTool) bool { return t.Type == typ && (name == "" || t.Name == name) })
	}
	switch o.Type {
	case "function":
		if o.Name == "" {
			return ToolChoice{}, errs.Missing("tool_choice.name")
		}
		if !has("function", o.Name) {
			return ToolChoice{}, errs.InvalidField("tool_choice.name", "Tool choice '%s' not found in 'tools' parameter.", clip(o.Name))
		}
		return ToolChoice{Choice: o.Name}, nil
	case "allowed_tools":
		if o.Mode != "auto" && o.Mode != "required" {
			return ToolChoice{}, errs.InvalidField("tool_choice.mode", "Invalid value: '%s'. Supported values are: 'auto' and 'required'.", clip(o.Mode))
		}
		allowed := map[string]bool{}
		for i, t := range o.Tools {
			key := t.Type
			switch t.Type {
			case "function":
				key = t.Name
				if !has("function", t.Name) {
					return ToolChoice{}, errs.InvalidField(fmt.Sprintf("tool_choice.tools[%d].name", i), "Tool choice '%s' not found in 'tools' parameter.", clip(t.Name))
				}
			case "mcp":
				key = AllowedKey(events.ResponseTool{Type: "mcp", ServerLabel: t.ServerLabel})
				if !slices.ContainsFunc(tools, func(rt events.ResponseTool) bool { return rt.Type == "mcp" && rt.ServerLabel == t.ServerLabel }) {
					return ToolChoice{}, errs.InvalidField(fmt.Sprintf("tool_choice.tools[%d].server_label", i), "MCP server '%s' not found in 'tools' parameter.", clip(t.ServerLabel))
				}
			}
			allowed[key] = true
		}
		return ToolChoice{Choice: o.Mode, Allowed: allowed}, nil
	case "file_search", "code_interpreter":
		if !has(o.Type, "") {
			return ToolChoice{}, errs.InvalidField("tool_choice.type", "Tool choice '%s' not found in 'tools' parameter.", o.Type)
		}
		return ToolChoice{Choice: o.Type}, nil
	case "":
		return ToolChoice{}, errs.Missing("tool_choice.type")
	default:
		return ToolChoice{}, errs.InvalidField("tool_choice.type", "Invalid value: '%s'.", clip(o.Type))
	}
}

// clip shortens a value quoted back in an error.
func clip(s string) string {
	if r := []rune(s); len(r) > 64 {
		return string(r[:64]) + "…"
	}
	return s
}
