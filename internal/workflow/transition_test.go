package workflow_test

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/workflow"
)

// Julep's allowed-next table, transition by transition, and the status each leaves.
func TestTransitionRules(t *testing.T) {
	all := []workflow.TransitionType{workflow.TypeInit, workflow.TypeInitBranch, workflow.TypeStep, workflow.TypeWait,
		workflow.TypeResume, workflow.TypeFinishBranch, workflow.TypeFinish, workflow.TypeError, workflow.TypeCancelled}
	allowed := map[workflow.TransitionType]string{
		"":                        "init init_branch error cancelled",
		workflow.TypeInit:         "init_branch step wait finish error cancelled",
		workflow.TypeInitBranch:   "init_branch step wait finish_branch finish error cancelled",
		workflow.TypeStep:         "init_branch step wait finish_branch finish error cancelled",
		workflow.TypeWait:         "step resume finish_branch finish cancelled",
		workflow.TypeResume:       "init_branch step wait finish_branch finish error cancelled",
		workflow.TypeFinishBranch: "init_branch step wait finish_branch finish error cancelled",
		workflow.TypeFinish:       "",
		workflow.TypeError:        "",
		workflow.TypeCancelled:    "",
	}
	for prev, list := range allowed {
		want := map[workflow.TransitionType]bool{}
		for _, f := range splitTypes(list) {
			want[f] = true
		}
		for _, next := range all {
			if got := workflow.CanFollow(prev, next); got != want[next] {
				t.Errorf("%q then %q: allowed %v, want %v", prev, next, got, want[next])
			}
		}
	}
	for typ, status := range map[workflow.TransitionType]workflow.Status{
		"": workflow.StatusQueued, workflow.TypeInit: workflow.StatusStarting, workflow.TypeStep: workflow.StatusRunning,
		workflow.TypeInitBranch: workflow.StatusRunning, workflow.TypeFinishBranch: workflow.StatusRunning,
		workflow.TypeResume: workflow.StatusRunning, workflow.TypeWait: workflow.StatusAwaitingInput,
		workflow.TypeFinish: workflow.StatusSucceeded, workflow.TypeError: workflow.StatusFailed,
		workflow.TypeCancelled: workflow.StatusCancelled,
	} {
		if got := workflow.StatusOf(typ); got != status {
			t.Errorf("status after %q: %s, want %s", typ, got, status)
		}
	}
}

func splitTypes(s string) []workflow.TransitionType {
	var out []workflow.TransitionType
	for _, f := range strings.Fields(s) {
		out = append(out, workflow.TransitionType(f))
	}
	return out
}
