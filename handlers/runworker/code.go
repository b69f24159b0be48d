package runworker

import (
	"context"
	"encoding/json"
	"regexp"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/handlers/turn"
	"github.com/contrailhq/contrail/internal/llm"
)

// CodeRunner runs a run's code_interpreter calls in the thread's sandbox, with the files of the assistant's and
// the thread's tool_resources.code_interpreter, and those the thread's messages attach for it, at /mnt/data. Files
// the code writes are saved as the account's files under IDs derived from key, so that a turn done again saves
// each once.
type CodeRunner interface {
	RunCode(ctx context.Context, account, threadID, assistantID string, threadResources json.RawMessage, attached []string,
		code, key string) (turn.CodeResult, error)
}

// runCode answers the turn's code_interpreter calls and records them; the run goes on to its next turn. The calls'
// step is recorded in progress before any code runs, so that a worker that dies while the code runs leaves a record
// of it: the run, driven again, records the calls as interrupted rather than run the code a second time.
func (w *Worker) runCode(ctx context.Context, ref thread.RunRef, t *thread.State, r *thread.Run, step string,
	calls []llm.ToolCall, usage events.TokenUsage) (*thread.State, error) {
	started := make([]events.ToolCall, len(calls))
	codes := make([]string, len(calls))
	errs := make([]error, len(calls))
	for i, c := range calls {
		codes[i], errs[i] = turn.CodeOf(c.Arguments)
		started[i] = events.ToolCall{ID: callID(step, i, c.ID), Type: turn.CodeInterpreter, Name: c.Name, Arguments: c.Arguments,
			CodeInterpreter: &events.CodeInterpreterCall{Input: codes[i], Outputs: []events.CodeOutput{}}}
	}
	t, ok, err := w.cfg.Runs.StartServerTools(ctx, ref, t, step, started, usage)
	if err != nil || !ok {
		return t, err // not to be run: the turn moved on, or its calls were started already
	}
	var recorded []events.ToolCall
	var outputs []events.ToolOutput
	for i, call := range started {
		var res turn.CodeResult
		err := errs[i]
		if err == nil {
			res, err = w.cfg.Code.RunCode(ctx, ref.Account, ref.ThreadID, r.AssistantID, t.ToolResources,
				t.AttachedFiles(turn.CodeInterpreter), codes[i], events.DeriveID(step, call.ID))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ci := *call.CodeInterpreter
		ci.Outputs = turn.CodeOutputs(res, err)
		if err == nil {
			ci.Files = res.Files
		}
		call.CodeInterpreter = &ci
		recorded = append(recorded, call)
		outputs = append(outputs, events.ToolOutput{ToolCallID: call.ID, Output: turn.CodeReport(ci.Outputs, ci.Files)})
	}
	return w.cfg.Runs.RecordServerTools(ctx, ref, t, step, recorded, outputs, usage)
}

// codeImages returns the images the run's code wrote that no message of the run shows yet.
func codeImages(t *thread.State, r *thread.Run) []string {
	shown := map[string]bool{}
	for _, m := range t.Messages {
		if m.RunID != r.RunID {
			continue
		}
		for _, p := range m.Content {
			if p.ImageFile != nil {
				shown[p.ImageFile.FileID] = true
			}
		}
	}
	var out []string
	for _, id := range r.Steps {
		for _, c := range t.Steps[id].ToolCalls {
			if c.CodeInterpreter == nil {
				continue
			}
			for _, o := range c.CodeInterpreter.Outputs {
				if o.Type == "image" && !shown[o.FileID] {
					out = append(out, o.FileID)
				}
			}
		}
	}
	return out
}

// sandboxLink is a link to a file code wrote, as models write them: sandbox:/mnt/data/<name>.
var sandboxLink = regexp.MustCompile(`sandbox:(/mnt/data/[^\s)\]"'>]+)`)

// filePaths turns the text's links to files the run's code wrote into file_path annotations.
func filePaths(text string, t *thread.State, r *thread.Run) []events.Annotation {
	saved := map[string]string{}
	for _, id := range r.Steps {
		for _, c := range t.Steps[id].ToolCalls {
			if c.CodeInterpreter != nil {
				for _, f := range c.CodeInterpreter.Files {
					saved[f.Path] = f.FileID
				}
			}
		}
	}
	var out []events.Annotation
	for _, m := range sandboxLink.FindAllStringSubmatchIndex(text, -1) {
		id, ok := saved[text[m[2]:m[3]]]
		if !ok {
			continue
		}
		start := utf8.RuneCountInString(text[:m[0]])
		out = append(out, events.Annotation{Type: "file_path", Text: text[m[0]:m[1]], StartIndex: start,
			EndIndex: start + utf8.RuneCountInString(text[m[0]:m[1]]), FileID: id})
	}
	return out
}
