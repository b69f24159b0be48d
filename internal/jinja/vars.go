package jinja

import (
	"encoding/json"
	"math"
	"reflect"
)

// DefaultSystemTemplate is Julep's default system template, as seed 004 gives it (verbatim: "About you" prints
// the agent's name, not its about, and tools whose type is not "function" make it divide by zero).
const DefaultSystemTemplate = `{%- if agent.name -%}
You are {{agent.name}}.{{" "}}
{%- endif -%}

{%- if agent.about -%}
About you: {{agent.name}}.{{" "}}
{%- endif -%}

{%- if user -%}
You are talking to a user
  {%- if user.name -%}{{" "}} and their name is {{user.name}}
    {%- if user.about -%}. About the user: {{user.about}}.{%- else -%}.{%- endif -%}
  {%- endif -%}
{%- endif -%}

{{"\n\n"}}

{%- if agent.instructions -%}
Instructions:{{"\n"}}
  {%- if agent.instructions is string -%}
    {{agent.instructions}}{{"\n"}}
  {%- else -%}
    {%- for instruction in agent.instructions -%}
      - {{instruction}}{{"\n"}}
    {%- endfor -%}
  {%- endif -%}
  {{"\n"}}
{%- endif -%}

{%- if tools -%}
Tools:{{"\n"}}
  {%- for tool in tools -%}
    {%- if tool.type == "function" -%}
      - {{tool.function.name}}
      {%- if tool.function.description -%}: {{tool.function.description}}{%- endif -%}{{"\n"}}
    {%- else -%}
      - {{ 0/0 }} {# Error: Other tool types aren't supported yet. #}
    {%- endif -%}
  {%- endfor -%}
{{"\n\n"}}
{%- endif -%}

{%- if docs -%}
Relevant documents:{{"\n"}}
  {%- for doc in docs -%}
    {{doc.title}}{{"\n"}}
    {%- if doc.content is string -%}
      {{doc.content}}{{"\n"}}
    {%- else -%}
      {%- for snippet in doc.content -%}
        {{snippet}}{{"\n"}}
      {%- endfor -%}
    {%- endif -%}
    {{"---"}}
  {%- endfor -%}
{%- endif -%}`

// SessionVars are the variables Julep gives a session's templates (its chat environment). The objects are
// what their JSON is (an agent's name, about, instructions, model, metadata, ...).
type SessionVars struct {
	Agent     any            // the agent answering
	Agents    []any          // every agent of the session
	User      any            // the first user, nil when the session has none
	Users     []any          // every user of the session
	Session   any            // the session (situation, metadata, ...)
	Situation string         // the session's situation, also at session.situation
	Docs      []any          // recalled documents: {title, content (string or list), metadata}
	Tools     []any          // the agent's tools: {type, name, function: {name, description, parameters}, ...}
	Settings  any            // generation settings
	Metadata  any            // the chat request's metadata
	Extra     map[string]any // anything else; a name here replaces the one above
}

// Map returns the variables by the names templates use.
func (v SessionVars) Map() map[string]any {
	m := map[string]any{
		"agent":         v.Agent,
		"current_agent": v.Agent,
		"agents":        orEmpty(v.Agents),
		"user":          v.User,
		"users":         orEmpty(v.Users),
		"session":       v.Session,
		"situation":     v.Situation,
		"docs":          orEmpty(v.Docs),
		"tools":         orEmpty(v.Tools),
		"settings":      v.Settings,
		"metadata":      v.Metadata,
	}
	for k, x := range v.Extra {
		m[k] = x
	}
	return m
}

func orEmpty(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

// Normalize turns v into the values a template sees: maps with string keys, lists, strings, bools, nil, ints
// for whole numbers and floats otherwise. Structs and typed maps or slices become what their JSON is.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int, int64:
		return x
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int(x)
		}
		return x
	case float32:
		return Normalize(float64(x))
	case int32:
		return int(x)
	case uint, uint32, uint64, int8, int16, uint8, uint16:
		return Normalize(reflect.ValueOf(x).Convert(reflect.TypeFor[float64]()).Float())
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	}
	// Anything else (structs, typed maps and slices, json.RawMessage): what its JSON says.
	data, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil
	}
	return Normalize(out)
}
