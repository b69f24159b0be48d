package turn

import (
	"fmt"
	"strings"

	"github.com/contrailhq/contrail/events"
)

// CodeResult is what a code_interpreter call gave: its logs (what it printed, and why it was cut short), the images
// and the other files it wrote, saved as the account's files.
type CodeResult struct {
	Logs   string
	Images []string
	Files  []events.CodeFile
}

// CodeOutputs is what a call records of what it gave (or of why it could not run): its logs, then its images.
func CodeOutputs(res CodeResult, err error) []events.CodeOutput {
	out := []events.CodeOutput{}
	if err != nil {
		return append(out, events.CodeOutput{Type: "logs", Logs: "code_interpreter could not run the code: " + err.Error()})
	}
	if res.Logs != "" {
		out = append(out, events.CodeOutput{Type: "logs", Logs: res.Logs})
	}
	for _, img := range res.Images {
		out = append(out, events.CodeOutput{Type: "image", FileID: img})
	}
	return out
}

// CodeReport is what the model reads of a call: its logs, how many images it wrote (the user sees them with the
// answer), the other files it wrote and how to link them, or that it printed nothing (an empty tool message is
// one some models refuse).
func CodeReport(outputs []events.CodeOutput, files []events.CodeFile) string {
	var b strings.Builder
	images := 0
	for _, o := range outputs {
		if o.Type == "logs" {
			b.WriteString(o.Logs)
		} else {
			images++
		}
	}
	if images > 0 {
		fmt.Fprintf(&b, "\n[%d image(s) written; they are shown to the user with your answer]\n", images)
	}
	for _, f := range files {
		fmt.Fprintf(&b, "\n[file written: %s (saved as %s); link it as sandbox:%s]\n", f.Path, f.FileID, f.Path)
	}
	if b.Len() == 0 {
		b.WriteString("(the code ran and printed nothing)")
	}
	return b.String()
}
