package response_test

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/contrailhq/contrail/domain/response"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/errs"
)

func TestToolChoiceIsWhatTheModelGets(t *testing.T) {
	tools := []events.ResponseTool{{Type: "function", Name: "get_weather"}, {Type: "file_search"}}
	for _, c := range []struct {
		raw     string
		choice  string
		allowed map[string]bool
	}{
		{``, "", nil},
		{`null`, "", nil},
		{`"required"`, "required", nil},
		{`{"type":"function","name":"get_weather"}`, "get_weather", nil},
		// A server tool is called by its type's name, as it is offered.
		{`{"type":"file_search"}`, "file_search", nil},
		{`{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"get_weather"},{"type":"file_search"}]}`,
			"required", map[string]bool{"get_weather": true, "file_search": true}},
	} {
		got, err := response.ToolChoiceOf(json.RawMessage(c.raw), tools)
		if err != nil || got.Choice != c.choice || !maps.Equal(got.Allowed, c.allowed) {
			t.Errorf("%s: %+v, %v", c.raw, got, err)
		}
	}
}

func TestToolChoiceRefusalsNameTheField(t *testing.T) {
	tools := []events.ResponseTool{{Type: "function", Name: "get_weather"}}
	for raw, field := range map[string]string{
		`"sometimes"`:                         "tool_choice",
		`{"type":"function"}`:                 "tool_choice.name",
		`{"type":"function","name":"nope"}`:   "tool_choice.name",
		`{"type":"code_interpreter"}`:         "tool_choice.type",
		`{"type":"allowed_tools","mode":"x"}`: "tool_choice.mode",
		`{}`:                                  "tool_choice.type",
		`{"type":"web_search"}`:               "tool_choice.type",
		`[1]`:                                 "tool_choice",
	} {
		_, err := response.ToolChoiceOf(json.RawMessage(raw), tools)
		if e := errs.As(err); e == nil || e.Code != errs.Invalid || e.Field != field {
			t.Errorf("%s: %v, want a refusal naming %s", raw, err, field)
		}
	}
}
