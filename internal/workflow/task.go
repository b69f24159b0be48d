package workflow

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v3"

	"github.com/contrailhq/contrail/internal/errs"
)

// MaxTaskBytes bounds a task's source.
const MaxTaskBytes = 1 << 20

// Task is a parsed task.
type Task struct {
	Name        string
	Description string
	// InputSchema is the JSON Schema inputs must match (nil: any input).
	InputSchema map[string]any
	Tools       []Tool
	// InheritTools adds the agent's tools to the task's (Julep 1.x's default is false; seed 004 says true).
	InheritTools bool
	Metadata     map[string]any
	// Workflows holds main and the other named workflows.
	Workflows map[string]*Workflow

	schema *jsonschema.Schema
	lists  map[string][]Step // every list of steps by its path
}

// Workflow is a named list of steps.
type Workflow struct {
	Name   string
	Steps  []Step
	Labels map[string]int
}

// Tool is a tool a task may call.
type Tool struct {
	Name        string
	Type        string // function, system, api_call, integration, ...
	Description string
	// Def is the tool's definition as given.
	Def map[string]any
}

// taskFields are a task's keys that are not workflows. The read-only ones are what Julep returns for a task,
// so that a task read back can be sent again.
var taskFields = map[string]bool{
	"name": true, "description": true, "input_schema": true, "tools": true, "inherit_tools": true, "metadata": true,
	"id": true, "created_at": true, "updated_at": true, "canonical_name": true, "agent_id": true, "kind_": true,
}

// Parse reads a task from JSON or YAML. A task that cannot run is refused with an errs.Invalid error whose
// Field is the path of what is wrong ("main[3].foreach.do").
func Parse(src []byte) (*Task, error) {
	if len(src) > MaxTaskBytes {
		return nil, errs.E(errs.TooLarge, "the task is %d bytes, more than the %d allowed", len(src), MaxTaskBytes)
	}
	doc, err := decode(src)
	if err != nil {
		msg := fmt.Sprintf("the task is neither JSON nor YAML: %v", err)
		if strings.Contains(err.Error(), "did not find expected ',' or '}'") {
			msg += ` (in YAML's braces, {k: v}, a value cannot hold [ ] { } or a comma unquoted: write that step's fields one per line, or quote the expression: {n: "$ steps[0].output"})`
		}
		return nil, errs.InvalidField("task", "%s", msg)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		return nil, errs.InvalidField("task", "a task is an object")
	}
	t, err := FromMap(m)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ParseSource reads a task as Parse does and returns it with its source as one JSON object: what is stored, so that
// a task sent as YAML is kept as the JSON every reader parses the same way.
func ParseSource(src []byte) (*Task, json.RawMessage, error) {
	t, err := Parse(src)
	if err != nil {
		return nil, nil, err
	}
	doc, err := decode(src)
	if err != nil {
		return nil, nil, errs.InvalidField("task", "the task is neither JSON nor YAML: %v", err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, errs.InvalidField("task", "the task cannot be written as JSON: %v", err)
	}
	return t, raw, nil
}

// FromMap reads a task from its decoded JSON.
func FromMap(m map[string]any) (*Task, error) {
	t, err := fromMap(m)
	var pe *ParseError
	if errors.As(err, &pe) {
		field := pe.Path
		if field == "" {
			field = "task"
		}
		return nil, &errs.Error{Code: errs.Invalid, Field: field, Message: pe.Error()}
	}
	return t, err
}

func decode(src []byte) (any, error) {
	trimmed := bytes.TrimSpace(src)
	if len(trimmed) > 0 && trimmed[0] == '{' {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		return normalize(v)
	}
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		return nil, err
	}
	return normalize(v)
}

// normalize makes YAML's values JSON's: string keys, float64 or json.Number numbers.
func normalize(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
		return x, nil
	case map[any]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			ks, ok := k.(string)
			if !ok {
				ks = fmt.Sprint(k)
			}
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			out[ks] = n
		}
		return out, nil
	case []any:
		for i, e := range x {
			n, err := normalize(e)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
		return x, nil
	case int:
		return json.Number(fmt.Sprint(x)), nil
	case int64:
		return json.Number(fmt.Sprint(x)), nil
	case uint64:
		return json.Number(fmt.Sprint(x)), nil
	case float64:
		return x, nil
	case json.Number, string, bool, nil:
		return x, nil
	}
	return nil, fmt.Errorf("unsupported value %T", v)
}

func fromMap(m map[string]any) (*Task, error) {
	t := &Task{Workflows: map[string]*Workflow{}, lists: map[string][]Step{}}
	var ok bool
	if t.Name, ok = m["name"].(string); !ok || strings.TrimSpace(t.Name) == "" {
		return nil, perr("name", "a task needs a name")
	}
	if d, present := m["description"]; present && d != nil {
		if t.Description, ok = d.(string); !ok {
			return nil, perr("description", "want a string")
		}
	}
	if b, present := m["inherit_tools"]; present && b != nil {
		if t.InheritTools, ok = b.(bool); !ok {
			return nil, perr("inherit_tools", "want true or false")
		}
	}
	if md, present := m["metadata"]; present && md != nil {
		if t.Metadata, ok = md.(map[string]any); !ok {
			return nil, perr("metadata", "want an object")
		}
	}
	if s, present := m["input_schema"]; present && s != nil {
		sm, ok := s.(map[string]any)
		if !ok {
			return nil, perr("input_schema", "want a JSON Schema object")
		}
		schema, err := compileSchema(sm)
		if err != nil {
			return nil, err
		}
		t.InputSchema, t.schema = sm, schema
	}
	p := &parser{task: t, lists: t.lists, tools: map[string]bool{}}
	if tl, present := m["tools"]; present && tl != nil {
		list, ok := tl.([]any)
		if !ok {
			return nil, perr("tools", "want a list of tools")
		}
		for i, e := range list {
			tool, err := parseTool(e, fmt.Sprintf("tools[%d]", i))
			if err != nil {
				return nil, err
			}
			if p.tools[tool.Name] {
				return nil, perr(fmt.Sprintf("tools[%d].name", i), "two tools are named %q", tool.Name)
			}
			p.tools[tool.Name] = true
			t.Tools = append(t.Tools, tool)
		}
	}
	if _, ok := m["main"]; !ok {
		return nil, perr("main", "a task needs a main workflow")
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		if taskFields[name] {
			continue
		}
		if _, isList := m[name].([]any); !isList && name != "main" {
			return nil, perr(name, "unknown field of a task (a workflow is a list of steps)")
		}
		if !validName(name) {
			return nil, perr(name, "a workflow's name is made of letters, digits and _")
		}
		steps, err := p.stepList(m[name], name)
		if err != nil {
			return nil, err
		}
		wf := &Workflow{Name: name, Steps: steps, Labels: map[string]int{}}
		for i, s := range steps {
			if l := Info(s).Label; l != "" {
				if _, dup := wf.Labels[l]; dup {
					return nil, perr(fmt.Sprintf("%s[%d].label", name, i), "two steps of %s are labelled %q", name, l)
				}
				wf.Labels[l] = i
			}
		}
		t.Workflows[name] = wf
	}
	if _, ok := m["main"].([]any); !ok {
		return nil, perr("main", "main is a list of steps")
	}
	for _, c := range p.calls {
		if _, ok := t.Workflows[c.workflow]; !ok {
			return nil, perr(c.path, "no workflow named %q (the task has %s)", c.workflow, strings.Join(t.workflowNames(), ", "))
		}
	}
	return t, nil
}

func (t *Task) workflowNames() []string {
	var names []string
	for n := range t.Workflows {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// DefinedTool is a tool a task defines, and where: "tools[1]" for the task's own, "main[2].tools[0]" for one a
// prompt step gives inline.
type DefinedTool struct {
	Path string
	Tool Tool
}

// DefinedTools are every tool the task defines, its own first, then its prompt steps' in the order of their paths;
// the task's commands check them as they check an agent's.
func (t *Task) DefinedTools() []DefinedTool {
	var out []DefinedTool
	for i, tl := range t.Tools {
		out = append(out, DefinedTool{Path: fmt.Sprintf("tools[%d]", i), Tool: tl})
	}
	var inline []DefinedTool
	for _, steps := range t.lists {
		for _, s := range steps {
			if p, ok := s.(*PromptStep); ok {
				for i, tl := range p.Tools {
					inline = append(inline, DefinedTool{Path: fmt.Sprintf("%s.tools[%d]", p.Path, i), Tool: tl})
				}
			}
		}
	}
	sort.Slice(inline, func(i, j int) bool { return inline[i].Path < inline[j].Path })
	return append(out, inline...)
}

// Steps returns the list of steps at a task path ("main", "main[2].foreach.do").
func (t *Task) Steps(path string) ([]Step, bool) {
	s, ok := t.lists[path]
	return s, ok
}

func parseTool(v any, path string) (Tool, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Tool{}, perr(path, "a tool is an object")
	}
	t := Tool{Def: m}
	t.Type, _ = m["type"].(string)
	if t.Type == "" {
		// Seed 004 writes `- function:` and the name beside it; the key that holds the definition says the type.
		for _, k := range []string{"function", "system", "api_call", "integration", "computer_20241022", "text_editor_20241022", "bash_20241022"} {
			if _, ok := m[k]; ok {
				t.Type = k
				break
			}
		}
	}
	if t.Type == "" {
		return Tool{}, perr(path+".type", "a tool needs a type (function, system, api_call, integration)")
	}
	t.Name, _ = m["name"].(string)
	if def, ok := m[t.Type].(map[string]any); ok {
		if t.Name == "" {
			t.Name, _ = def["name"].(string)
		}
		t.Description, _ = def["description"].(string)
	}
	if d, ok := m["description"].(string); ok && d != "" {
		t.Description = d
	}
	if !validName(t.Name) {
		return Tool{}, perr(path+".name", "a tool needs a name of letters, digits and _")
	}
	return t, nil
}

// jsonSchemaKeywords tell a JSON Schema from seed 004's shorthand, a map of property names to schemas.
var jsonSchemaKeywords = []string{"$schema", "$id", "$ref", "$defs", "type", "properties", "required", "items",
	"additionalProperties", "enum", "const", "oneOf", "anyOf", "allOf", "not", "if", "then", "else", "definitions",
	"patternProperties", "minProperties", "maxProperties", "format", "title", "description", "default"}

// schemaURL is where an input_schema is put for compiling. A name without a scheme would be made a file URL
// under the server's working directory, which the compiler's messages (a 400's text) would then show; relative
// $refs resolve under this one to URLs no loader answers.
const schemaURL = "contrail:///input_schema.json"

func compileSchema(s map[string]any) (*jsonschema.Schema, error) {
	doc := s
	if isPropertiesShorthand(s) {
		// Seed 004's example writes the properties directly under input_schema.
		doc = map[string]any{"type": "object", "properties": s}
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, perr("input_schema", "%v", err)
	}
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, perr("input_schema", "%v", err)
	}
	c := jsonschema.NewCompiler()
	// No loader: a schema must not make the server read files or fetch URLs.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(schemaURL, parsed); err != nil {
		return nil, perr("input_schema", "%v", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, perr("input_schema", "not a valid JSON Schema: %v", err)
	}
	return sch, nil
}

func isPropertiesShorthand(s map[string]any) bool {
	if len(s) == 0 {
		return false
	}
	for _, k := range jsonSchemaKeywords {
		if _, ok := s[k]; ok {
			return false
		}
	}
	for _, v := range s {
		if _, ok := v.(map[string]any); !ok {
			return false
		}
	}
	return true
}

// ValidateInput checks an execution's input against the task's input_schema. The error is errs.Invalid with
// the field at fault ("input.topics[0]").
func (t *Task) ValidateInput(input any) error {
	if t.schema == nil {
		return nil
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return errs.InvalidField("input", "the input is not JSON: %v", err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return errs.InvalidField("input", "the input is not JSON: %v", err)
	}
	err = t.schema.Validate(v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	field := "input"
	for _, p := range leaf.InstanceLocation {
		if isIndex(p) {
			field += "[" + p + "]"
		} else {
			field += "." + p
		}
	}
	msg := leaf.Error()
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "at ") {
		msg = msg[i+2:]
	}
	return errs.InvalidField(field, "%s: %s", field, msg)
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
