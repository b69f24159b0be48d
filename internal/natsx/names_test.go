package natsx_test

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/natsx"
)

func TestValidSubjectKeepsOutsideTextFromBecomingAWildcardOrALongLine(t *testing.T) {
	for _, c := range []struct {
		s               string
		plain, wildcard bool
	}{
		{"contrail.ev.session.ses_1.message_posted", true, true},
		{"contrail.ev.session.ses_1.>", false, true},
		{"contrail.ev.session.*.message_posted", false, true},
		{"contrail.ev.session.>.x", false, false},
		{"contrail.ev.session.ses*.x", false, false},
		{"contrail.ev..x", false, false},
		{"contrail.ev.x.", false, false},
		{"contrail.ev.a b", false, false},
		{"contrail.ev.a\x00b", false, false},
		{"contrail.ev.a\tb", false, false},
		{"contrail.ev.ключ", true, true},
		{"", false, false},
		{"contrail.ev." + strings.Repeat("a", natsx.MaxSubjectLen), false, false},
	} {
		if got := natsx.ValidSubject(c.s, false); got != c.plain {
			t.Errorf("ValidSubject(%.60q, false) = %v", c.s, got)
		}
		if got := natsx.ValidSubject(c.s, true); got != c.wildcard {
			t.Errorf("ValidSubject(%.60q, true) = %v", c.s, got)
		}
	}
	for _, c := range []struct {
		s               string
		plain, wildcard bool
	}{
		{"acct_1.asst_2", true, true},
		{"acct_1.>", false, true},
		{"v.acct_1.YWdlbnQ=.a2V5", true, true},
		{"acct_1.ключ", false, false},
		{"acct_1.a b", false, false},
		{"acct_1." + strings.Repeat("A", 4000), false, false},
	} {
		if got := natsx.ValidKey(c.s, false); got != c.plain {
			t.Errorf("ValidKey(%.60q, false) = %v", c.s, got)
		}
		if got := natsx.ValidKey(c.s, true); got != c.wildcard {
			t.Errorf("ValidKey(%.60q, true) = %v", c.s, got)
		}
	}
}
