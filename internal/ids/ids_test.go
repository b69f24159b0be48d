package ids_test

import (
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/ids"
)

// The inputs every face must refuse as an ID: wildcards and separators of NATS subjects, whitespace, control
// characters, other scripts, and strings long enough to break a connection's control line.
var hostile = []string{"", "*", ">", ".", "asst_*", "asst_>", "asst_a.b", "asst_a b", " asst_a", "asst_a\x00", "asst_\t",
	"asst_ключ", "asst_💥", "asst_" + strings.Repeat("A", 124), "asst_" + strings.Repeat("A", 100<<10), "asst_", "thread_abc",
	"ASST_abc", "asst_a/b", "asst_a%2Fb", "asst_a\r\nb"}

func TestCheckRefusesWhatCannotBeAnID(t *testing.T) {
	for _, id := range hostile {
		err := ids.Check("assistant_id", ids.Assistant, id)
		e := errs.As(err)
		if e == nil || e.Code != errs.Invalid || e.Field != "assistant_id" {
			t.Errorf("Check(%.40q) = %v, want an invalid error naming assistant_id", id, err)
			continue
		}
		if len(id) > 8 && strings.Contains(e.Message, id) {
			t.Errorf("Check(%.40q): the message repeats the input: %.200s", id, e.Message)
		}
		if len(e.Message) > 300 {
			t.Errorf("Check(%.40q): a message of %d bytes", id, len(e.Message))
		}
	}
}

func TestCheckTakesTheIDsThePlatformHandsOut(t *testing.T) {
	for _, c := range []struct {
		k  ids.Kind
		id string
	}{
		{ids.Assistant, "asst_01JABCDEFGHJKMNPQRSTVWXYZ0"},
		{ids.File, "file-01JABCDEFGHJKMNPQRSTVWXYZ0"},
		{ids.Step, "step_01JABCDEFGHJKMNPQRSTVWXYZ0"},
		{ids.Embed, "emb_0123456789abcdef0123456789"},
		{ids.Key, "key_0123456789abcdef0123"},
		{ids.Account, "acct_admin"},
		{ids.Token, "agents"},
		{ids.Assistant, "asst_" + strings.Repeat("a", ids.MaxLen-5)},
	} {
		if err := ids.Check("id", c.k, c.id); err != nil {
			t.Errorf("Check(%s, %q) = %v", c.k.Name, c.id, err)
		}
	}
}

func TestCheckNameBoundsWhatClientsChoose(t *testing.T) {
	for _, good := range []string{"weather", "alice/weather", "with space", "ключ", "dots.and..more", "*", ">"} {
		if err := ids.CheckName("handle", good, 64); err != nil {
			t.Errorf("CheckName(%q) = %v", good, err)
		}
	}
	for _, bad := range []string{"", " ", "\t\n", "a\x00b", "a\x7fb", "a\u0085b", "\xff\xfe", strings.Repeat("h", 65), strings.Repeat("h", 100<<10)} {
		err := ids.CheckName("handle", bad, 64)
		e := errs.As(err)
		if e == nil || e.Code != errs.Invalid || e.Field != "handle" {
			t.Errorf("CheckName(%.40q) = %v, want an invalid error naming handle", bad, err)
			continue
		}
		if len(bad) > 8 && strings.Contains(e.Message, bad) {
			t.Errorf("CheckName(%.40q): the message repeats the input", bad)
		}
	}
}
