package client_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/contrailhq/contrail/internal/mcp/client"
)

// TestSealedHeadersOpenOnlyWhereSealed: a box opens for the account and server_url it was sealed for, and for no
// other account, no other URL, and under no other deployment's key.
func TestSealedHeadersOpenOnlyWhereSealed(t *testing.T) {
	material := bytes.Repeat([]byte{7}, 32)
	s, err := client.NewSealer(material, "secret")
	if err != nil {
		t.Fatal(err)
	}
	const acct, url = "acct_a", "https://mcp.example.com/mcp"
	box, err := s.Seal(map[string]string{"Authorization": "Bearer sk-a"}, acct, url)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Open(box, acct, url)
	if err != nil || h["Authorization"] != "Bearer sk-a" {
		t.Fatalf("open where sealed: %v %v", h, err)
	}
	other, err := client.NewSealer(bytes.Repeat([]byte{8}, 32), "secret")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name         string
		s            *client.Sealer
		account, url string
	}{
		{"another account", s, "acct_b", url},
		{"another server_url", s, acct, "https://evil.example.com/mcp"},
		{"the pair's parts moved across the boundary", s, "acct_ah", "ttps://mcp.example.com/mcp"},
		{"another deployment's key", other, acct, url},
	} {
		h, err := c.s.Open(box, c.account, c.url)
		if !errors.Is(err, client.ErrSealedElsewhere) || h != nil {
			t.Errorf("%s: opened to %v, %v", c.name, h, err)
		}
	}
	if h, err := s.Open("", "acct_b", url); err != nil || h != nil {
		t.Errorf("no headers: %v %v", h, err)
	}
}
