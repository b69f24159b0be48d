package openaiapi_test

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/llm"
	"github.com/contrailhq/contrail/internal/llm/llmtest"
	"github.com/contrailhq/contrail/internal/npmtest"
)

// npmDir holds the Node program that drives OpenAI's npm SDKs, its package.json and its lockfile.
const npmDir = "testdata/npm"

// npmRun is what one SDK saw (sdk.mjs).
type npmRun struct {
	Store struct {
		ID       string            `json:"id"`
		Object   string            `json:"object"`
		Metadata map[string]string `json:"metadata"`
	} `json:"store"`
	File struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	} `json:"file"`
	Batch struct {
		Status     string `json:"status"`
		FileCounts struct {
			Completed int `json:"completed"`
		} `json:"file_counts"`
	} `json:"batch"`
	Search []struct {
		FileID  string `json:"file_id"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"search"`
	StoreAfter struct {
		FileCounts struct {
			Completed int `json:"completed"`
		} `json:"file_counts"`
	} `json:"storeAfter"`
	Run struct {
		Status string `json:"status"`
	} `json:"run"`
	Messages         []sdkMessage `json:"messages"`
	StreamedMessages []sdkMessage `json:"streamedMessages"`
	Events           []string     `json:"events"`
	Deleted          struct {
		Deleted bool   `json:"deleted"`
		Object  string `json:"object"`
	} `json:"deleted"`
	AfterDelete struct {
		Status int `json:"status"`
	} `json:"afterDelete"`
	IDs struct {
		Manual, FAQ string
	} `json:"ids"`
}

type sdkMessage struct {
	Role    string `json:"role"`
	Content []struct {
		Text struct {
			Value       string `json:"value"`
			Annotations []struct {
				Type         string `json:"type"`
				Text         string `json:"text"`
				FileCitation struct {
					FileID string `json:"file_id"`
				} `json:"file_citation"`
			} `json:"annotations"`
		} `json:"text"`
	} `json:"content"`
}

// TestOpenAINpmSDKs: OpenAI's official npm SDK, 4.104.0 and 7.57.0, against the node with only its base URL
// changed: a vector store with a file polled to completion, a batch, search, and file_search runs polled and
// streamed whose answers cite the file.
func TestOpenAINpmSDKs(t *testing.T) {
	npmtest.Install(t, npmDir, filepath.Join("openai7", "package.json"), "OpenAI's npm SDK")
	e := newEnv(t)
	e.model.HandleFunc(func(req llmtest.Request) llmtest.Reply {
		if last := req.LastMessage(); last.Role == llm.RoleTool {
			if !strings.Contains(last.Content, "descaling solution") {
				return llmtest.Text("The search found nothing: " + last.Content)
			}
			return llmtest.Text("Every three months【0:0†manual.txt】.")
		}
		return llmtest.ToolCalls(llm.ToolCall{Name: "file_search", Arguments: `{"queries":["descaling"]}`})
	})
	var out map[string]npmRun
	npmtest.RunJSON(t, npmDir, "sdk.mjs", []string{"OPENAI_BASE_URL=" + e.node.URL + "/v1", "OPENAI_API_KEY=" + e.key}, &out)
	for _, v := range []string{"v4", "v7"} {
		r, ok := out[v]
		if !ok {
			t.Fatalf("no output of the %s SDK: %+v", v, out)
		}
		if r.Store.Object != "vector_store" || r.Store.Metadata["team"] != "support" || r.File.Status != "completed" || r.File.ID != r.IDs.Manual {
			t.Errorf("%s: store %+v, file %+v", v, r.Store, r.File)
		}
		if r.Batch.Status != "completed" || r.Batch.FileCounts.Completed != 1 || r.StoreAfter.FileCounts.Completed != 2 {
			t.Errorf("%s: batch %+v, store after %+v", v, r.Batch, r.StoreAfter)
		}
		if len(r.Search) == 0 || r.Search[0].FileID != r.IDs.Manual || !strings.Contains(r.Search[0].Content[0].Text, "descaling solution") {
			t.Errorf("%s: search %+v", v, r.Search)
		}
		if r.Run.Status != "completed" {
			t.Errorf("%s: run %+v", v, r.Run)
		}
		for name, msgs := range map[string][]sdkMessage{"polled": r.Messages, "streamed": r.StreamedMessages} {
			if len(msgs) != 2 || len(msgs[0].Content) != 1 || len(msgs[0].Content[0].Text.Annotations) != 1 ||
				msgs[0].Content[0].Text.Annotations[0].FileCitation.FileID != r.IDs.Manual {
				t.Errorf("%s: the %s run's answer: %+v", v, name, msgs)
			}
		}
		for _, want := range []string{"thread.run.step.completed", "thread.message.completed", "thread.run.completed"} {
			if !slices.Contains(r.Events, want) {
				t.Errorf("%s: the stream had no %s: %v", v, want, r.Events)
			}
		}
		if !r.Deleted.Deleted || r.Deleted.Object != "vector_store.deleted" || r.AfterDelete.Status != 404 {
			t.Errorf("%s: delete %+v, then %+v", v, r.Deleted, r.AfterDelete)
		}
	}
}
