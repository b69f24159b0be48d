package workflow_test

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/workflow"
)

// TestParseRefusesAStepOfTheWrongShape: each kind of step refuses what it cannot run with a 400 whose field is the
// path of the part that is wrong and whose message says what the step takes.
func TestParseRefusesAStepOfTheWrongShape(t *testing.T) {
	const tools = "tools:\n- {name: search, type: function}\n"
	cases := []struct {
		name, main, field, says string
	}{
		{"tool call with an unknown field", "- tool: {name: search, query: x}", "main[0].tool.query", "unknown field of a tool call"},
		{"tool call naming no tool", "- tool: {arguments: {q: x}}", "main[0].tool", "a tool step names a tool"},
		{"tool call with arguments twice", "- tool: {name: search, arguments: {q: x}}\n  arguments: {q: y}", "main[0].tool.arguments", "arguments are given twice"},
		{"tool the task does not have", "- tool: fetch", "main[0].tool", `no tool named "fetch"`},
		{"if without then", "- if: $ True", "main[0]", "an if step needs then"},
		{"empty switch", "- switch: []", "main[0].switch", "switch takes a non-empty list"},
		{"switch case that is not an object", "- switch: [x]", "main[0].switch[0]", "a case is {case, then}"},
		{"switch case with an unknown field", "- switch:\n  - {case: _, then: [{return: 1}], else: 2}", "main[0].switch[0].else", "unknown field of a case"},
		{"foreach that is not an object", "- foreach: [1, 2]", "main[0].foreach", "foreach takes {in, do}"},
		{"foreach with an unknown field", "- foreach:\n    in: $ [1]\n    do: [{return: 1}]\n    by: 2", "main[0].foreach.by", "unknown field of a foreach"},
		{"map_reduce with too much parallelism", "- over: $ [1]\n  map: [{return: 1}]\n  parallelism: 1000", "main[0].parallelism", "parallelism is a whole number from 1 to 100"},
		{"empty parallel", "- parallel: []", "main[0].parallel", "parallel takes a list of 1 to 100 steps"},
		{"wait_for_input that is a list", "- wait_for_input: [1]", "main[0].wait_for_input", "wait_for_input takes {info}"},
		{"wait_for_input with an unknown field", "- wait_for_input: {info: {a: 1}, timeout: 3}", "main[0].wait_for_input.timeout", "unknown field of wait_for_input"},
		{"yield that is not an object", "- yield: other", "main[0].yield", "yield takes {workflow, arguments}"},
		{"yield with an unknown field", "- yield: {workflow: other, wait: true}", "main[0].yield.wait", "unknown field of yield"},
		{"yield naming no workflow", "- yield: {arguments: {}}", "main[0].yield.workflow", "name the workflow to run"},
		{"get of an empty list", "- get: []", "main[0].get", "get takes a key or a list of keys"},
		{"get of a key that is not a string", "- get: [a, 3]", "main[0].get[1]", "a key is a non-empty string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "name: bad\n" + tools + "main:\n" + c.main + "\nother:\n- return: 1\n"
			_, err := workflow.Parse([]byte(src))
			if err == nil {
				t.Fatalf("parsed:\n%s", src)
			}
			e := errs.As(err)
			if e == nil || e.Code != errs.Invalid || e.Field != c.field || !strings.Contains(e.Message, c.says) {
				t.Fatalf("error %v (field %q), want field %q saying %q", err, fieldOf(e), c.field, c.says)
			}
		})
	}
}

func fieldOf(e *errs.Error) string {
	if e == nil {
		return ""
	}
	return e.Field
}
