package agentproto

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"go.yaml.in/yaml/v3"

	"github.com/contrailhq/contrail/internal/codeshot"
)

// Agent types, as the "type" field of the metadata names them.
const (
	TypeCodeShot   = "code_shot"
	TypeStandalone = "standalone"
)

// Metadata is what an agent says about itself at GET /.
type Metadata struct {
	// Type is TypeCodeShot or TypeStandalone. Agents that predate the field (the protocol page's JSON has only
	// base_prompt and few_shots) are Code Shot agents when they send few-shots.
	Type string `json:"type"`
	// BasePrompt and FewShots define a Code Shot agent. FewShots holds the examples as the agent sent them; when it
	// sent one string, it is split as Fixie split it (codeshot.Split). Validation is the registry's business
	// (codeshot.Validate), so that it can report every problem at once.
	BasePrompt     string   `json:"base_prompt,omitempty"`
	FewShots       []string `json:"few_shots,omitempty"`
	Conversational bool     `json:"conversational,omitempty"`
	// SampleQueries are a standalone agent's examples of what it answers (the router embeds them).
	SampleQueries []string `json:"sample_queries,omitempty"`
}

// Metadata fetches the metadata of the agent at agentURL (GET {agentURL}/). The Fixie SDK answers YAML
// (application/yaml) although its documentation promised JSON, and some servers label one as the other, so the
// body's own first character decides how it is read; the content type only helps explain a failure.
func (c *Client) Metadata(ctx context.Context, agentURL string, claims Claims) (Metadata, error) {
	x := exchange{op: "fetch metadata", agent: agentURL, method: http.MethodGet, timeout: c.timeout, claims: claims,
		accept: "application/json, application/yaml;q=0.9"}
	base, err := baseURL(agentURL)
	if err != nil {
		return Metadata{}, x.fail(ErrInvalid, 0, err, "%v", err)
	}
	x.url = base
	resp, cancel, err := c.do(ctx, &x)
	if err != nil {
		return Metadata{}, err
	}
	defer cancel()
	defer resp.Body.Close()
	body, err := c.readBody(ctx, &x, resp.Body)
	if err != nil {
		return Metadata{}, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Metadata{}, x.statusError(resp.StatusCode, body)
	}
	md, err := ParseMetadata(body)
	var derr decodeError
	switch {
	case errors.As(err, &derr):
		ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		if ct == "" {
			ct = "none"
		}
		return Metadata{}, x.fail(ErrBadResponse, resp.StatusCode, err, "%v (content type %s)", err, ct)
	case err != nil:
		return Metadata{}, x.fail(ErrBadResponse, resp.StatusCode, err, "%v", err)
	}
	return md, nil
}

// ParseMetadata reads metadata sent as JSON or YAML, checking the fields it needs: few_shots (and base_prompt) for
// a Code Shot agent; for a standalone agent, nothing more (its sample_queries may be absent).
func ParseMetadata(body []byte) (Metadata, error) {
	fields, err := decodeObject(body)
	if err != nil {
		return Metadata{}, err
	}
	var md Metadata
	str := func(key string) (string, bool, error) {
		v, ok := fields[key]
		if !ok || v == nil {
			return "", false, nil
		}
		s, ok := v.(string)
		if !ok {
			return "", true, fmt.Errorf("%s must be a string, not %s", key, typeName(v))
		}
		return s, true, nil
	}
	strList := func(key string) ([]string, bool, error) {
		v, ok := fields[key]
		if !ok || v == nil {
			return nil, false, nil
		}
		list, ok := v.([]any)
		if !ok {
			return nil, true, fmt.Errorf("%s must be a list of strings, not %s", key, typeName(v))
		}
		out := make([]string, len(list))
		for i, item := range list {
			s, ok := item.(string)
			if !ok {
				return nil, true, fmt.Errorf("%s[%d] must be a string, not %s", key, i, typeName(item))
			}
			out[i] = s
		}
		return out, true, nil
	}

	typ, _, err := str("type")
	if err != nil {
		return Metadata{}, err
	}
	_, hasFewShots := fields["few_shots"]
	switch {
	case typ == "" && hasFewShots:
		typ = TypeCodeShot
	case typ == "" && fields["sample_queries"] != nil:
		typ = TypeStandalone
	case typ == "":
		return Metadata{}, fmt.Errorf("the metadata has no type, few_shots or sample_queries: is this a Fixie agent?")
	case typ != TypeCodeShot && typ != TypeStandalone:
		return Metadata{}, fmt.Errorf("unknown agent type %q (want %q or %q)", typ, TypeCodeShot, TypeStandalone)
	}
	md.Type = typ

	if md.SampleQueries, _, err = strList("sample_queries"); err != nil {
		return Metadata{}, err
	}
	if typ == TypeStandalone {
		return md, nil
	}

	var ok bool
	if md.BasePrompt, ok, err = str("base_prompt"); err != nil {
		return Metadata{}, err
	} else if !ok {
		return Metadata{}, fmt.Errorf("the metadata of a Code Shot agent needs base_prompt")
	}
	switch v := fields["few_shots"].(type) {
	case string:
		md.FewShots = codeshot.Split(v)
	case []any:
		if md.FewShots, _, err = strList("few_shots"); err != nil {
			return Metadata{}, err
		}
	case nil:
	default:
		return Metadata{}, fmt.Errorf("few_shots must be a string or a list of strings, not %s", typeName(v))
	}
	if len(md.FewShots) == 0 {
		return Metadata{}, fmt.Errorf("the metadata of a Code Shot agent needs few_shots, and it has none")
	}
	if v, ok := fields["conversational"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return Metadata{}, fmt.Errorf("conversational must be true or false, not %s", typeName(v))
		}
		md.Conversational = b
	}
	return md, nil
}

// decodeObject reads a JSON or YAML object. A body that starts with "{" is JSON (or YAML flow style, tried next);
// anything else is YAML. HTML error pages and other text fail as "not an object".
func decodeObject(body []byte) (map[string]any, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, decodeError{fmt.Errorf("the metadata is empty")}
	}
	var fields map[string]any
	var jsonErr error
	if trimmed[0] == '{' {
		if jsonErr = json.Unmarshal(trimmed, &fields); jsonErr == nil {
			return fields, nil
		}
	}
	var doc any
	if err := yaml.Unmarshal(trimmed, &doc); err != nil {
		if jsonErr != nil {
			return nil, decodeError{fmt.Errorf("the metadata is neither JSON (%v) nor YAML (%v): %s", jsonErr, err, snippet(body))}
		}
		return nil, decodeError{fmt.Errorf("the metadata is neither JSON nor YAML (%v): %s", err, snippet(body))}
	}
	fields, ok := doc.(map[string]any)
	if !ok {
		return nil, decodeError{fmt.Errorf("the metadata is not a JSON or YAML object: %s", snippet(body))}
	}
	return fields, nil
}

// decodeError marks a body that could not be read as JSON or YAML at all, where the content type the agent
// declared helps explain what it sent.
type decodeError struct{ error }

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, uint64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
