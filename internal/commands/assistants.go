package commands

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/assistant"
	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/eventstore"
	"github.com/contrailhq/contrail/internal/auth"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/natsx"
)

// Assistant is the assistant aggregate (domain/assistant).
type Assistant = assistant.State

// Assistants are the commands on Assistants API assistants.
type Assistants struct {
	store   *eventstore.Store
	sandbox func() error
}

// Create creates an assistant and returns its ID and what it appended.
func (c *Assistants) Create(ctx context.Context, actor auth.Principal, spec events.AssistantSpec) (string, eventstore.Appended, error) {
	if err := ValidateAssistant(spec); err != nil {
		return "", eventstore.Appended{}, err
	}
	if err := c.checkSandbox(spec.Tools); err != nil {
		return "", eventstore.Appended{}, err
	}
	if err := checkToolResources(ctx, c.store, actor, "tool_resources", spec.ToolResources); err != nil {
		return "", eventstore.Appended{}, err
	}
	id := events.NewPrefixedID("asst_")
	res, err := eventstore.Update(ctx, c.store, events.Ref{Type: "assistant", ID: id}, actor.Meta(), func(a *Assistant) ([]events.Event, error) {
		if a.Exists {
			return nil, errs.E(errs.Conflict, "assistant %s exists", id)
		}
		return []events.Event{events.AssistantCreated{AssistantSpec: spec}}, nil
	})
	if err != nil {
		return "", eventstore.Appended{}, err
	}
	return id, res, nil
}

// Modify changes an assistant: change edits a copy of its settings, which must still be valid.
func (c *Assistants) Modify(ctx context.Context, actor auth.Principal, id string, change func(*events.AssistantSpec)) (eventstore.Appended, error) {
	if !validID(id) {
		return eventstore.Appended{}, errs.NotFoundf("assistant", id)
	}
	// New tool resources are checked before the update, against the assistant as it is now: the check reads other
	// aggregates, which the decision below does not. Resources left as they were are not checked again (a file
	// deleted since it was attached must not block a change of name).
	cur, err := c.assistant(ctx, actor, id)
	if err != nil {
		return eventstore.Appended{}, err
	}
	next := cloneSpec(cur.Spec)
	change(&next)
	if !bytes.Equal(next.ToolResources, cur.Spec.ToolResources) {
		if err := checkToolResources(ctx, c.store, actor, "tool_resources", next.ToolResources); err != nil {
			return eventstore.Appended{}, err
		}
	}
	return eventstore.Update(ctx, c.store, events.Ref{Type: "assistant", ID: id}, actor.Meta(), func(a *Assistant) ([]events.Event, error) {
		if !a.Owned(actor.AccountID) {
			return nil, errs.NotFoundf("assistant", id)
		}
		spec := cloneSpec(a.Spec)
		change(&spec)
		if err := ValidateAssistant(spec); err != nil {
			return nil, err
		}
		if err := c.checkSandbox(spec.Tools); err != nil {
			return nil, err
		}
		return []events.Event{events.AssistantModified{AssistantSpec: spec}}, nil
	})
}

// Delete deletes an assistant.
func (c *Assistants) Delete(ctx context.Context, actor auth.Principal, id string) (eventstore.Appended, error) {
	if !validID(id) {
		return eventstore.Appended{}, errs.NotFoundf("assistant", id)
	}
	return eventstore.Update(ctx, c.store, events.Ref{Type: "assistant", ID: id}, actor.Meta(), func(a *Assistant) ([]events.Event, error) {
		if !a.Owned(actor.AccountID) {
			return nil, errs.NotFoundf("assistant", id)
		}
		return []events.Event{events.AssistantDeleted{}}, nil
	})
}

// assistant loads an assistant the actor may use, from the log (a run copies its settings, so the read must be
// current).
func (c *Assistants) assistant(ctx context.Context, actor auth.Principal, id string) (Assistant, error) {
	var a Assistant
	if !validID(id) {
		return a, errs.NotFoundf("assistant", id)
	}
	a, err := foldConfirmed(ctx, c.store, events.Ref{Type: "assistant", ID: id}, func(a *Assistant) bool { return a.Owned(actor.AccountID) })
	if err != nil {
		return a, err
	}
	if !a.Owned(actor.AccountID) {
		return a, errs.NotFoundf("assistant", id)
	}
	return a, nil
}

func cloneSpec(s events.AssistantSpec) events.AssistantSpec {
	out := s
	out.Tools = append([]events.Tool(nil), s.Tools...)
	if s.Metadata != nil {
		out.Metadata = make(map[string]string, len(s.Metadata))
		for k, v := range s.Metadata {
			out.Metadata[k] = v
		}
	}
	return out
}

// ValidateAssistant checks an assistant's settings, naming the field at fault.
func ValidateAssistant(s events.AssistantSpec) error {
	if strings.TrimSpace(s.Model) == "" {
		return errs.Missing("model")
	}
	for _, f := range []struct {
		name string
		v    *string
		max  int
	}{{"model", &s.Model, maxModelChars}, {"name", s.Name, maxNameChars}, {"description", s.Description, maxDescriptionChars},
		{"instructions", s.Instructions, maxInstructionsChars}} {
		if f.v != nil {
			if err := checkChars(f.name, *f.v, f.max); err != nil {
				return err
			}
		}
	}
	if err := ValidateTools("tools", s.Tools); err != nil {
		return err
	}
	if err := validateSampling(s.Temperature, s.TopP); err != nil {
		return err
	}
	if err := checkJSON("tool_resources", s.ToolResources); err != nil {
		return err
	}
	if err := checkJSON("response_format", s.ResponseFormat); err != nil {
		return err
	}
	if err := checkReasoningEffort(s.ReasoningEffort); err != nil {
		return err
	}
	return ValidateMetadata("metadata", s.Metadata)
}

// checkJSON bounds a field kept as the client sent it.
func checkJSON(field string, raw json.RawMessage) error {
	if len(raw) > maxJSONBytes {
		return errs.InvalidField(field, "%s is %d bytes of JSON; at most %d are allowed", field, len(raw), maxJSONBytes)
	}
	return nil
}

// checkReasoningEffort accepts the values OpenAI defines ("" = not given).
func checkReasoningEffort(v string) error {
	switch v {
	case "", "minimal", "low", "medium", "high":
		return nil
	}
	return errs.InvalidField("reasoning_effort", "invalid value. Supported values are: 'minimal', 'low', 'medium', and 'high'")
}

func validateSampling(temperature, topP *float64) error {
	if temperature != nil && (*temperature < 0 || *temperature > 2) {
		return errs.InvalidField("temperature", "%g is not a valid temperature: expected a number from 0 to 2", *temperature)
	}
	if topP != nil && (*topP < 0 || *topP > 1) {
		return errs.InvalidField("top_p", "%g is not a valid top_p: expected a number from 0 to 1", *topP)
	}
	return nil
}

// checkSandbox refuses code_interpreter on a node that cannot run code, saying what is missing (the sandbox's own
// words: what to install), rather than accept a tool every run would fail to use.
func (c *Assistants) checkSandbox(tools []events.Tool) error {
	for i, t := range tools {
		if t.Type != "code_interpreter" {
			continue
		}
		why := errors.New("this node was started without a sandbox")
		if c.sandbox != nil {
			why = c.sandbox()
		}
		if why != nil {
			msg := why.Error()
			if errs.As(why) != nil {
				msg = errs.MessageOf(why)
			}
			return errs.InvalidField(fmt.Sprintf("tools[%d].type", i), "code_interpreter cannot run on this server: %s", msg)
		}
	}
	return nil
}

// checkFileSearch checks a file_search tool's options: max_num_results 1-50, score_threshold 0-1.
func checkFileSearch(field string, o *events.FileSearchOptions) error {
	if o == nil {
		return nil
	}
	if o.MaxNumResults < 0 || o.MaxNumResults > maxSearchResults {
		return errs.InvalidField(field+".max_num_results", "max_num_results must be between 1 and %d, got %d", maxSearchResults, o.MaxNumResults)
	}
	if r := o.RankingOptions; r != nil {
		if r.ScoreThreshold < 0 || r.ScoreThreshold > 1 {
			return errs.InvalidField(field+".ranking_options.score_threshold", "score_threshold must be between 0 and 1")
		}
		switch r.Ranker {
		case "", "auto", "default_2024_08_21":
		default:
			return errs.InvalidField(field+".ranking_options.ranker", "invalid value: '%s'. Supported values are: 'auto' and 'default_2024_08_21'", r.Ranker)
		}
	}
	return nil
}

// functionName is the form OpenAI requires of a function's name.
var functionName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// The names the model calls file_search and code_interpreter by: they are offered as functions the run worker
// answers.
const (
	FileSearchTool      = thread.FileSearchTool
	CodeInterpreterTool = thread.CodeInterpreterTool
)

// ValidateTools checks a list of tools: functions, file_search and code_interpreter (whether this node can run
// code is the commands' check, checkSandbox).
func ValidateTools(field string, tools []events.Tool) error {
	if err := checkCount(field, len(tools), maxTools); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, t := range tools {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch t.Type {
		case "function":
		case "file_search":
			if seen[FileSearchTool] {
				return errs.InvalidField(at+".type", "file_search is given twice")
			}
			seen[FileSearchTool] = true
			if err := checkFileSearch(at+".file_search", t.FileSearch); err != nil {
				return err
			}
			continue
		case "code_interpreter":
			if seen[CodeInterpreterTool] {
				return errs.InvalidField(at+".type", "code_interpreter is given twice")
			}
			seen[CodeInterpreterTool] = true
			continue
		case "":
			return errs.Missing(at + ".type")
		default:
			return errs.InvalidField(at+".type", "invalid value. Supported values are: 'code_interpreter', 'function', and 'file_search'")
		}
		if t.Function == nil {
			return errs.Missing(at + ".function")
		}
		if t.Function.Name == "" {
			return errs.Missing(at + ".function.name")
		}
		if !functionName.MatchString(t.Function.Name) {
			return errs.InvalidField(at+".function.name", "invalid function name: expected 1 to 64 letters, digits, underscores or dashes")
		}
		if seen[t.Function.Name] {
			return errs.InvalidField(at+".function.name", "duplicate function name '%s'", t.Function.Name)
		}
		seen[t.Function.Name] = true
		if err := checkChars(at+".function.description", t.Function.Description, maxToolDescriptionChars); err != nil {
			return err
		}
		if len(t.Function.Parameters) > maxToolParametersBytes {
			return errs.InvalidField(at+".function.parameters", "the JSON schema is %d bytes; at most %d are allowed", len(t.Function.Parameters), maxToolParametersBytes)
		}
		if p := strings.TrimSpace(string(t.Function.Parameters)); p != "" && p != "null" && !strings.HasPrefix(p, "{") {
			return errs.InvalidField(at+".function.parameters", "expected a JSON schema object")
		}
	}
	return nil
}

// ValidateMetadata checks metadata against OpenAI's limits: 16 pairs, keys up to 64 characters, values up to 512.
func ValidateMetadata(field string, m map[string]string) error {
	if len(m) > maxMetadataPairs {
		return errs.InvalidField(field, "object has too many properties. Expected an object with at most %d properties, but got %d instead", maxMetadataPairs, len(m))
	}
	for k, v := range m {
		if n := utf8.RuneCountInString(k); n > maxMetadataKeyChars {
			return errs.InvalidField(field, "a key is %d characters long: keys may have at most %d characters", n, maxMetadataKeyChars)
		}
		if err := checkChars(field+"."+k, v, maxMetadataValChars); err != nil {
			return err
		}
	}
	return nil
}

// validID reports whether an ID can name an aggregate (a subject token); anything else names nothing. The faces
// refuse such IDs by name first (internal/ids); commands check again, so that no caller can load a wildcard.
func validID(id string) bool { return natsx.ValidToken(id) }
