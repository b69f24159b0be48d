package sealbox_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/contrailhq/contrail/internal/sealbox"
)

// A box opens with the key of its use and its binding only: another use's key (same material and secret), another
// secret, another binding or a cut box does not open it.
func TestABoxOpensForItsUseAndBindingOnly(t *testing.T) {
	material := bytes.Repeat([]byte{7}, 32)
	key := func(secret, label string) *sealbox.Key {
		t.Helper()
		k, err := sealbox.New(material, secret, label)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	mine := key("s", "use one")
	box := mine.Seal([]byte("a token"), []byte("acct_a"))
	if bytes.Contains(box, []byte("a token")) {
		t.Fatalf("the box shows its content: %q", box)
	}
	if got, err := mine.Open(box, []byte("acct_a")); err != nil || string(got) != "a token" {
		t.Fatalf("open = %q, %v", got, err)
	}
	for name, open := range map[string]func() ([]byte, error){
		"another use's key": func() ([]byte, error) { return key("s", "use two").Open(box, []byte("acct_a")) },
		"another secret":    func() ([]byte, error) { return key("t", "use one").Open(box, []byte("acct_a")) },
		"another binding":   func() ([]byte, error) { return mine.Open(box, []byte("acct_b")) },
		"a cut box":         func() ([]byte, error) { return mine.Open(box[:len(box)-1], []byte("acct_a")) },
	} {
		if got, err := open(); !errors.Is(err, sealbox.ErrNotOpened) {
			t.Errorf("%s: open = %q, %v; want ErrNotOpened", name, got, err)
		}
	}
	if _, err := mine.Open(box[:5], []byte("acct_a")); !errors.Is(err, sealbox.ErrMalformed) {
		t.Errorf("a box shorter than a nonce: %v, want ErrMalformed", err)
	}
	if _, err := sealbox.New(material[:31], "s", "use one"); err == nil {
		t.Error("material of 31 bytes was taken")
	}
}
