package turn_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
)

func TestCitationsNameOnlyResultsTheSearchesFound(t *testing.T) {
	found := map[string][]events.FileSearchResult{
		"0":     {{FileID: "file-a", FileName: "a.pdf"}, {FileID: "file-b", FileName: "b.pdf"}},
		"fs_x1": {{FileID: "file-c", FileName: "c.pdf"}},
	}
	// The text before the markers holds characters of several bytes: indexes count characters, as both APIs do.
	text := "Entkälken【0:1†b.pdf】 alle drei Monate【fs_x1:0†c.pdf】; not【0:2†b.pdf】【9:0†z】【fs_y:0†c】【0:99999999999999999999†a】."
	got := turn.Citations(text, func(key string) []events.FileSearchResult { return found[key] })
	if len(got) != 2 {
		t.Fatalf("citations: %+v", got)
	}
	if got[0].Result.FileID != "file-b" || got[0].Start != 9 || got[0].End != 9+len([]rune("【0:1†b.pdf】")) || got[0].Text != "【0:1†b.pdf】" {
		t.Errorf("first: %+v", got[0])
	}
	second := strings.Index(text, "【fs_x1")
	if got[1].Result.FileID != "file-c" || got[1].Start != len([]rune(text[:second])) {
		t.Errorf("second: %+v", got[1])
	}
}

func TestSearchReportPutsEachResultUnderTheMarkerTheAnswerCites(t *testing.T) {
	results := []events.FileSearchResult{{FileID: "file-a", FileName: "a.pdf", Text: "first"}, {FileID: "file-b", FileName: "b.pdf", Text: "second"}}
	report := turn.SearchReport("fs_1", results)
	if !strings.Contains(report, "【fs_1:1†b.pdf】\nsecond") {
		t.Fatalf("report: %q", report)
	}
	// What the model copies from the report is what Citations resolves.
	cited := turn.Citations("see "+strings.SplitN(report, "\n", 2)[0], func(string) []events.FileSearchResult { return results })
	if len(cited) != 1 || cited[0].Result.FileID != "file-a" {
		t.Fatalf("cited: %+v", cited)
	}
	if turn.SearchReport("0", nil) != turn.NothingFound {
		t.Errorf("an empty search reads %q", turn.SearchReport("0", nil))
	}
	if why, failed := turn.SearchFailureOf(turn.SearchFailure(errors.New("no store"))); !failed || why != "no store" {
		t.Errorf("failure read back as %q, %v", why, failed)
	}
	if _, failed := turn.SearchFailureOf(report); failed {
		t.Errorf("a report read as a failure")
	}
}

func TestSearchOptionsDefaultAsOpenAIDoes(t *testing.T) {
	if o := turn.NewSearchOptions(0, 0, ""); o != (turn.SearchOptions{Limit: 20, Ranker: "auto"}) {
		t.Errorf("defaults: %+v", o)
	}
	if o := turn.NewSearchOptions(3, 0.5, "default_2024_08_21"); o != (turn.SearchOptions{Limit: 3, Threshold: 0.5, Ranker: "default_2024_08_21"}) {
		t.Errorf("given: %+v", o)
	}
}

func TestArgumentsOfServerToolCalls(t *testing.T) {
	for _, c := range []struct {
		args string
		want []string
		ok   bool
	}{
		{`{"queries":["a","b"]}`, []string{"a", "b"}, true},
		{`{"query":"a"}`, []string{"a"}, true},
		{`{}`, nil, false},
		{`not json`, nil, false},
	} {
		got, err := turn.SearchQueries(c.args)
		if (err == nil) != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("SearchQueries(%s) = %v, %v", c.args, got, err)
		}
	}
	for _, c := range []struct {
		args, want string
		ok         bool
	}{
		{`{"code":"print(1)"}`, "print(1)", true},
		{"print(1)", "print(1)", true}, // bare code, taken at its word
		{`{"code":"  "}`, "", false},
		{`{"code":`, "", false},
	} {
		got, err := turn.CodeOf(c.args)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("CodeOf(%s) = %q, %v", c.args, got, err)
		}
	}
}

func TestCodeOutputsAndWhatTheModelReadsOfThem(t *testing.T) {
	res := turn.CodeResult{Logs: "60\n", Images: []string{"file-img"}, Files: []events.CodeFile{{Path: "/mnt/data/t.csv", FileID: "file-t"}}}
	out := turn.CodeOutputs(res, nil)
	if len(out) != 2 || out[0] != (events.CodeOutput{Type: "logs", Logs: "60\n"}) || out[1] != (events.CodeOutput{Type: "image", FileID: "file-img"}) {
		t.Fatalf("outputs: %+v", out)
	}
	report := turn.CodeReport(out, res.Files)
	if !strings.HasPrefix(report, "60\n") || !strings.Contains(report, "1 image(s) written") ||
		!strings.Contains(report, "link it as sandbox:/mnt/data/t.csv") {
		t.Errorf("report: %q", report)
	}
	if got := turn.CodeReport(out[:1], nil); got != "60\n" {
		t.Errorf("logs only: %q", got)
	}
	failed := turn.CodeOutputs(res, errors.New("no sandbox"))
	if len(failed) != 1 || failed[0].Logs != "code_interpreter could not run the code: no sandbox" {
		t.Errorf("failed: %+v", failed)
	}
	if got := turn.CodeReport(turn.CodeOutputs(turn.CodeResult{}, nil), nil); got != "(the code ran and printed nothing)" {
		t.Errorf("silent code: %q", got)
	}
}

func msgs(roles ...string) []llm.Message {
	var out []llm.Message
	for i, r := range roles {
		out = append(out, llm.Message{Role: r, Content: fmt.Sprint(i)})
	}
	return out
}

func contents(ms []llm.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString(m.Content)
	}
	return b.String()
}

func TestTruncationKeepsACallWithItsOutputsAndTheNewestMessage(t *testing.T) {
	// user 0, assistant call 1 with outputs 2 and 3, assistant 4, user 5
	all := msgs(llm.RoleUser, llm.RoleAssistant, llm.RoleTool, llm.RoleTool, llm.RoleAssistant, llm.RoleUser)
	if got := contents(turn.Flatten(turn.KeepLast(turn.Group(all), 3))); got != "12345" {
		t.Errorf("last 3: %s", got)
	}
	if got := contents(turn.Flatten(turn.KeepLast(turn.Group(all), 2))); got != "45" {
		t.Errorf("last 2 (a call is not kept without its outputs, nor outputs without their call): %s", got)
	}
	// Entries that are not droppable (a run's own calls) stay whatever the count.
	entries := []turn.Entry{{Messages: msgs(llm.RoleUser), Droppable: true}, {Messages: msgs(llm.RoleAssistant)},
		{Messages: msgs(llm.RoleUser), Droppable: true}}
	if got := turn.KeepLast(entries, 1); len(got) != 2 || got[0].Droppable || !got[1].Droppable {
		t.Errorf("keep 1: %+v", got)
	}
	if !turn.DropOldest(&entries) || len(entries) != 2 || entries[0].Droppable {
		t.Fatalf("drop oldest: %+v", entries)
	}
	if turn.DropOldest(&entries) || len(entries) != 2 {
		t.Errorf("the newest message was dropped: %+v", entries)
	}
}

func TestPiecesPlaceEachStreamedPiece(t *testing.T) {
	var p turn.Pieces
	if p.AddText("Hel") != 0 || p.AddText("") != 3 || p.AddText("lo") != 3 || !slices.Equal(p.Text(), []int{3, 2}) {
		t.Fatalf("text: %v", p.Text())
	}
	off, first := p.AddCall(llm.ToolCallDelta{Index: 1, ID: "call_b", Name: "f", Arguments: `{"a"`})
	if off != 0 || !first {
		t.Errorf("first piece: %d, %v", off, first)
	}
	if off, first = p.AddCall(llm.ToolCallDelta{Index: 0, ID: "call_a", Arguments: `{}`}); off != 0 || !first {
		t.Errorf("another call: %d, %v", off, first)
	}
	if off, first = p.AddCall(llm.ToolCallDelta{Index: 1, Arguments: `:1}`}); off != 4 || first {
		t.Errorf("next piece: %d, %v", off, first)
	}
	if !slices.Equal(p.Args("call_b"), []int{4, 3}) || !slices.Equal(p.Args("call_a"), []int{2}) || p.Args("call_c") != nil {
		t.Errorf("args: %v %v", p.Args("call_b"), p.Args("call_a"))
	}
}

func TestModelCallsAndToolsAreNamedAlikeForBothAPIs(t *testing.T) {
	for err, want := range map[error]string{
		fmt.Errorf("model: %w", llm.ErrRateLimited): "rate_limit_exceeded",
		fmt.Errorf("model: %w", llm.ErrBadRequest):  "invalid_prompt",
		errors.New("connection reset"):              "server_error",
	} {
		if got := turn.FailureCode(err); got != want {
			t.Errorf("FailureCode(%v) = %s", err, got)
		}
	}
	if turn.CallID("call_m", "turn", "call-0") != "call_m" {
		t.Errorf("the model's ID is not kept")
	}
	if a, b := turn.CallID("", "turn", "call-0"), turn.CallID("", "turn", "call-1"); a == b || a != turn.CallID("", "turn", "call-0") || !strings.HasPrefix(a, "call_") {
		t.Errorf("derived IDs: %s %s", a, b)
	}
	strict := true
	if turn.FunctionTool("f", "", nil, &strict).Strict || !turn.FunctionTool("f", "", []byte(`{"type":"object"}`), &strict).Strict {
		t.Errorf("strict is passed on only with parameters")
	}
}

func TestTheOfflineModelQuotesOnlyAPassageThatMatches(t *testing.T) {
	results := []events.FileSearchResult{
		{FileName: "far.pdf", Text: "Nothing here concerns it."},
		{FileName: "manual.pdf", Text: "Safety first. Descaling the boiler is needed every three months. Use vinegar."},
	}
	text := turn.OfflineAnswer("How often should I descale the boiler?", "of this thread", "fs_1", turn.SearchReport("fs_1", results), results)
	if !strings.Contains(text, "\u201cDescaling the boiler is needed every three months. Use vinegar.\u201d【fs_1:1†manual.pdf】") {
		t.Errorf("answer: %s", text)
	}
	cited := turn.Citations(text, func(string) []events.FileSearchResult { return results })
	if len(cited) != 1 || cited[0].Result.FileName != "manual.pdf" {
		t.Errorf("the answer's citation: %+v", cited)
	}
	if text := turn.OfflineAnswer("What about the garden?", "of this thread", "0", turn.SearchReport("0", results), results); !strings.Contains(text, "found nothing that matches") || strings.Contains(text, "【") {
		t.Errorf("no match: %s", text)
	}
	if text := turn.OfflineAnswer("descale?", "", "0", turn.SearchFailure(errors.New("no store")), nil); text != "I could not search the files: no store" {
		t.Errorf("failed search: %s", text)
	}
	if text := turn.OfflineAnswer("descale?", "", "0", turn.SearchFailure(nil), nil); text != "I could not search the files." {
		t.Errorf("failed search, why not kept: %s", text)
	}
}

func TestCompletionCapCountsEveryCall(t *testing.T) {
	limit := 100
	var req llm.Request
	if capped, spent := turn.CapCompletion(&req, &limit, 60); !capped || spent || req.MaxTokens != 40 {
		t.Errorf("40 left: %v %v %d", capped, spent, req.MaxTokens)
	}
	if capped, spent := turn.CapCompletion(&llm.Request{}, &limit, 100); capped || !spent {
		t.Errorf("none left: %v %v", capped, spent)
	}
	if capped, spent := turn.CapCompletion(&llm.Request{}, nil, 1000); capped || spent {
		t.Errorf("no limit: %v %v", capped, spent)
	}
	cut := llm.Response{FinishReason: llm.FinishLength}
	if !turn.CutShort(cut, true) || turn.CutShort(cut, false) || turn.CutShort(llm.Response{FinishReason: llm.FinishStop}, true) {
		t.Errorf("cut short")
	}
}
