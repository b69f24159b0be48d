package platform

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/sandbox"
)

// What /readyz says of code_interpreter (TestReadyzSaysWhetherCodeInterpreterIsAvailable), in each state.
func TestCodeInterpreterStatusSaysWhyNot(t *testing.T) {
	// Before the first call: what is not installed.
	s := &codeSandbox{cfg: sandbox.Config{Bwrap: "/nonexistent/bwrap"}}
	if st := s.status(); st.Available || !strings.Contains(st.Reason, "bubblewrap is not installed") {
		t.Errorf("without bubblewrap: %+v", st)
	}
	// After it: what New found.
	s = &codeSandbox{made: true, err: errs.E(errs.Unavailable, "bubblewrap cannot create namespaces on this machine")}
	if st := s.status(); st.Available || !strings.Contains(st.Reason, "cannot create namespaces") {
		t.Errorf("after a failed start: %+v", st)
	}
	s = &codeSandbox{made: true}
	if st := s.status(); st.Available || st.Reason != "the node is stopping" {
		t.Errorf("stopped: %+v", st)
	}
}
