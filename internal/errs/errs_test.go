package errs_test

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/contrailhq/contrail/internal/errs"
)

func TestMessagesNeverRepeatAHugeInput(t *testing.T) {
	huge := strings.Repeat("é", 3<<20) // 6 MB, two bytes a rune: a cut in the middle of one would be invalid UTF-8
	for name, e := range map[string]*errs.Error{
		"E":            errs.E(errs.Invalid, "bad value %q", huge),
		"InvalidField": errs.InvalidField("model", "model %s is unknown", huge),
		"NotFoundf":    errs.NotFoundf("assistant", huge),
		"Limit":        errs.Limit(0, "%v", errors.New(huge)),
	} {
		if len(e.Message) > errs.MaxErrArg+100 {
			t.Errorf("%s: a message of %d bytes", name, len(e.Message))
		}
		if !utf8.ValidString(e.Message) {
			t.Errorf("%s: the clipped message is not valid UTF-8", name)
		}
		if !strings.Contains(e.Message, "(6291456 bytes)") {
			t.Errorf("%s: the message does not say how long the input was: %s", name, e.Message)
		}
	}
	// Short arguments are shown as they are.
	if e := errs.InvalidField("name", "name %q and %d", "short", 7); e.Message != `name "short" and 7` {
		t.Errorf("a short argument changed: %s", e.Message)
	}
}

func TestEveryCodeHasAStatus(t *testing.T) {
	for code, want := range map[errs.Code]int{errs.Invalid: 400, errs.NotFound: 404, errs.Conflict: 409,
		errs.TooLarge: 413, errs.MethodNotAllowed: 405, errs.RateLimited: 429, errs.Internal: 500} {
		if got := errs.HTTPStatus(code); got != want {
			t.Errorf("%s: %d, want %d", code, got, want)
		}
	}
}
