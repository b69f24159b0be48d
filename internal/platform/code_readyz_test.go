package platform_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/platform/platformtest"
	"github.com/contrailhq/contrail/internal/sandbox"
)

// TestReadyzSaysWhetherCodeInterpreterIsAvailable: /readyz's answer says whether this node can run
// code_interpreter and, when it cannot, why, without starting a sandbox to find out.
func TestReadyzSaysWhetherCodeInterpreterIsAvailable(t *testing.T) {
	t.Parallel()
	n := platformtest.Start(t)
	r := n.Do(t, "", "GET", "/readyz", nil)
	var body struct {
		Status string `json:"status"`
		Code   struct {
			Available bool   `json:"available"`
			Reason    string `json:"reason"`
		} `json:"code_interpreter"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil || r.Status != 200 || body.Status != "ready" {
		t.Fatalf("/readyz: %d %s (%v)", r.Status, r.Body, err)
	}
	check := sandbox.Check(sandbox.Config{})
	if body.Code.Available != (check == nil) || body.Code.Reason == "" {
		t.Errorf("/readyz says %+v of code_interpreter; this machine: %v", body.Code, check)
	}
	if check != nil && !strings.Contains(body.Code.Reason, errs.MessageOf(check)) {
		t.Errorf("reason %q, want %q", body.Code.Reason, errs.MessageOf(check))
	}
}
