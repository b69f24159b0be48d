package runworker

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/contrailhq/contrail/domain/thread"
	"github.com/contrailhq/contrail/events"
	"github.com/contrailhq/contrail/internal/llm"
)

// CodeRunner runs a run's code_interpreter calls in the thread's sandbox, with the files of the assistant's and
// the thread's tool_resources.code_interpreter, and those the thread's messages attach for it, at /mnt/data. Files the code writes are saved as the account's
// files under IDs derived from key, so that a turn done again saves each once.
type CodeRunner interface {
	RunCode(ctx context.Context, account, threadID, assistantID string, threadResources json.RawMessage, attached []string,
		code, key string) (CodeResult, error)
}

// CodeResult is what a call gave: its logs (what it printed, and why it was cut short), the images and the other
// files it wrote, saved as files.
type CodeResult struct {
	Logs   string
	Images []string
	Files  []SavedFile
}

// SavedFile is a file the code wrote: its path in the sandbox and the file it was saved as.
type SavedFile struct {
	Path   string
	FileID string
}

// CodeTool is how code_interpreter is offered to the model (by runs and responses alike).
var CodeTool = llm.Tool{
	Name: thread.CodeInterpreterTool,
	Description: "Run Python 3 code in a sandbox without network access, like a notebook cell: variables stay " +
		"between calls of this conversation. The user's files are in /mnt/data; save files you make there (charts " +
		"as PNG with matplotlib). What the code prints is returned.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","description":"The Python code to run."}},"required":["code"]}`),
}

// runCode answers the turn's code_interpreter calls and records them; the run goes on to its next turn.
func (w *Worker) runCode(ctx context.Context, ref thread.RunRef, t *thread.State, r *thread.Run, turn string,
	calls []llm.ToolCall, usage events.TokenUsage) (*thread.State, error) {
	var recorded []events.ToolCall
	var outputs []events.ToolOutput
	for i, c := range calls {
		id := callID(turn, i, c.ID)
		code, err := CodeOf(c.Arguments)
		call := events.ToolCall{ID: id, Type: "code_interpreter", Name: c.Name, Arguments: c.Arguments,
			CodeInterpreter: &events.CodeInterpreterCall{Input: code, Outputs: []events.CodeOutput{}}}
		var res CodeResult
		if err == nil {
			res, err = w.cfg.Code.RunCode(ctx, ref.Account, ref.ThreadID, r.AssistantID, t.ToolResources,
				t.AttachedFiles("code_interpreter"), code, events.DeriveID(turn, id))
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var out strings.Builder
		if err != nil {
			fmt.Fprintf(&out, "code_interpreter could not run the code: %v", err)
			call.CodeInterpreter.Outputs = append(call.CodeInterpreter.Outputs, events.CodeOutput{Type: "logs", Logs: out.String()})
		} else {
			if res.Logs != "" {
				call.CodeInterpreter.Outputs = append(call.CodeInterpreter.Outputs, events.CodeOutput{Type: "logs", Logs: res.Logs})
			}
			out.WriteString(res.Logs)
			for _, img := range res.Images {
				call.CodeInterpreter.Outputs = append(call.CodeInterpreter.Outputs, events.CodeOutput{Type: "image", FileID: img})
			}
			if len(res.Images) > 0 {
				fmt.Fprintf(&out, "\n[%d image(s) written; they are shown to the user with your answer]\n", len(res.Images))
			}
			for _, f := range res.Files {
				fmt.Fprintf(&out, "\n[file written: %s (saved as %s); link it as sandbox:%s]\n", f.Path, f.FileID, f.Path)
				call.CodeInterpreter.Files = append(call.CodeInterpreter.Files, events.CodeFile{Path: f.Path, FileID: f.FileID})
			}
			if out.Len() == 0 {
				out.WriteString("(the code ran and printed nothing)")
			}
		}
		recorded = append(recorded, call)
		outputs = append(outputs, events.ToolOutput{ToolCallID: id, Output: out.String()})
	}
	return w.cfg.Runs.RecordServerTools(ctx, ref, t, turn, recorded, outputs, usage)
}

// CodeOf reads a code_interpreter call's arguments: {"code": "..."}; a model that sends bare code is taken at its
// word.
func CodeOf(args string) (string, error) {
	var a struct {
		Code string `json:"code"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		if strings.TrimSpace(args) != "" && !strings.HasPrefix(strings.TrimSpace(args), "{") {
			return args, nil
		}
		return "", fmt.Errorf("the call's arguments are not the JSON object {\"code\": \"...\"}: %v", err)
	}
	if strings.TrimSpace(a.Code) == "" {
		return "", fmt.Errorf("the call gives no code")
	}
	return a.Code, nil
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
