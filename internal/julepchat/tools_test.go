package julepchat_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/apicall"
	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/julepchat"
)

func fn(name, params string) events.JulepTool {
	return events.JulepTool{Name: name, Type: julepchat.ToolFunction, Function: &events.JulepFunctionDef{Parameters: json.RawMessage(params)}}
}

// x-tool-parameters: the session's over the user's over the agent's; "<type>:<name>" for one tool, bare names for
// every tool that has the parameter. Fixed parameters leave the schema the model sees, and come back in the call.
func TestToolParameters(t *testing.T) {
	agent := json.RawMessage(`{"x-tool-parameters": {"favorite": "Emma Watson", "function:check": {"customer_id": 1}}}`)
	user := json.RawMessage(`{"x-tool-parameters": {"favorite": "Emma Roberts", "function:check": {"customer_id": 42}}}`)
	sess := json.RawMessage(`{"x-tool-parameters": {"favorite": "Emma Stone"}}`)
	params := julepchat.MergeToolParameters(agent, user, sess)
	mail := fn("send_fan_mail", `{"type":"object","properties":{"favorite":{"type":"string"},"text":{"type":"string"}},"required":["favorite","text"]}`)
	check := fn("check", `{"type":"object","properties":{"customer_id":{"type":"integer"}},"required":["customer_id"]}`)
	other := fn("other", `{"type":"object","properties":{"q":{"type":"string"}}}`)
	offered := julepchat.Offer([]events.JulepTool{mail, check, other}, params)
	if s := string(offered[0].Model.Parameters); strings.Contains(s, "favorite") || !strings.Contains(s, `"text"`) {
		t.Fatalf("send_fan_mail's schema: %s", s)
	}
	if got := offered[0].Complete(`{"text":"hi","favorite":"model's pick"}`); !strings.Contains(got, `"favorite":"Emma Stone"`) || !strings.Contains(got, `"text":"hi"`) {
		t.Fatalf("completed call: %s", got)
	}
	if got := offered[1].Complete(`{}`); got != `{"customer_id":42}` {
		t.Fatalf("check's call: %s", got)
	}
	if offered[2].Fixed != nil || offered[2].Complete(`{"q":"x"}`) != `{"q":"x"}` {
		t.Fatalf("a tool without fixed parameters: %+v", offered[2])
	}
}

func TestCheckTool(t *testing.T) {
	hosts, err := apicall.ParseHosts([]string{"api.example.com, example.org:8443"})
	if err != nil {
		t.Fatal(err)
	}
	call := func(url string) events.JulepTool {
		return events.JulepTool{Name: "c", Type: julepchat.ToolAPICall, APICall: &events.JulepAPICallDef{Method: "GET", URL: url}}
	}
	ok := []events.JulepTool{fn("f", `{"type":"object"}`), call("https://api.example.com/x"), call("https://example.org:8443/y"),
		{Name: "s", Type: julepchat.ToolSystem, System: &events.JulepSystemDef{Resource: "user", Subresource: "doc", Operation: "search"}}}
	for _, tool := range ok {
		if err := julepchat.CheckTool("tool", tool, hosts); err != nil {
			t.Errorf("%+v: %v", tool, err)
		}
	}
	bad := []events.JulepTool{call("https://example.org/y"), call("https://evil.example.com/"), call("ftp://api.example.com/"),
		call("https://user:pw@api.example.com/"), fn("f", `[1]`), {Name: "i", Type: julepchat.ToolIntegration},
		{Name: "s", Type: julepchat.ToolSystem, System: &events.JulepSystemDef{Resource: "agent", Operation: "delete"}},
		{Name: "", Type: julepchat.ToolFunction, Function: &events.JulepFunctionDef{}}}
	for _, tool := range bad {
		if err := julepchat.CheckTool("tool", tool, hosts); errs.CodeOf(err) != errs.Invalid {
			t.Errorf("%+v: %v, want invalid", tool, err)
		}
	}
	if _, err := apicall.ParseHosts([]string{"https://x.com/path"}); err == nil {
		t.Error("a URL taken as a host")
	}
}
