package openaiapi_test

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/compaction"
	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
)

type compactRun struct {
	SDK struct {
		Object, ID, Sealed, Answer, Missing string
		Types                               []string
		Usage                               int
	} `json:"sdk"`
	Session struct {
		Compacted bool
		Usage     int
		Types     []string
		Final     string
	} `json:"session"`
}

// TestResponsesCompactWithNpmSDKs: openai 7.57.0's responses.compact() and the Agents SDK 0.20.0's
// OpenAIResponsesCompactionSession (a forced compaction of its items, then a turn on the compacted items) against
// the node: the model answers from the summary the compaction item carries.
func TestResponsesCompactWithNpmSDKs(t *testing.T) {
	npmtest.Install(t, agentsDir, filepath.Join("@openai", "agents", "package.json"), "the OpenAI Agents SDK")
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		all := ""
		for _, m := range req.Messages {
			all += m.Role + ":" + m.Content + "\n"
		}
		switch {
		case len(req.Messages) > 0 && req.Messages[0].Role == llm.RoleSystem && req.Messages[0].Content == compaction.Prompt:
			if strings.Contains(all, "42") && strings.Contains(all, "Ada") {
				return llmtest.Text("SUMMARY: the user is Ada; her number is 42.")
			}
			return llmtest.Text("SUMMARY: nothing.")
		case strings.Contains(req.LastMessage().Content, "What is my number?"):
			if strings.Contains(all, "Summary of the earlier conversation") && strings.Contains(all, "her number is 42.") {
				return llmtest.Text("From the summary: 42.")
			}
			return llmtest.Text("I was not given a summary.")
		}
		return llmtest.Text("Noted.")
	})
	var out compactRun
	npmtest.RunJSON(t, agentsDir, "compact.mjs", []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key}, &out)
	raw, _ := json.Marshal(out)
	s := out.SDK
	if s.Object != "response.compaction" || !strings.HasPrefix(s.ID, "resp_") || !slices.Equal(s.Types, []string{"message", "compaction"}) ||
		s.Usage == 0 || s.Sealed == "" || strings.Contains(s.Sealed, "SUMMARY") || s.Answer != "From the summary: 42." {
		t.Errorf("responses.compact(): %s", raw)
	}
	if s.Missing != "400 input" {
		t.Errorf("responses.compact() with no input: %q", s.Missing)
	}
	ss := out.Session
	if !ss.Compacted || ss.Usage == 0 || !slices.Equal(ss.Types, []string{"message:user", "message:user", "compaction"}) ||
		ss.Final != "From the summary: 42." {
		t.Errorf("OpenAIResponsesCompactionSession: %s", raw)
	}
}
