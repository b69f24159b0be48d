package genrand

import (
	"context"
	"errors"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
)

func serveAgent(t *testing.T, opts ...Option) string {
	t.Helper()
	s, err := agentkit.New(Agent(opts...))
	if err != nil {
		t.Fatalf("agentkit.New: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestGenrandStaysInRange(t *testing.T) {
	t.Parallel()
	u := serveAgent(t, WithSeed(1, 2))
	c := agentproto.NewClient()
	seen := map[int64]bool{}
	for range 200 {
		got, err := c.CallFunc(context.Background(), u, "genrand", agentproto.Message{Text: "5, 10"}, agentproto.Claims{})
		if err != nil {
			t.Fatalf("genrand(5, 10): %v", err)
		}
		n, err := strconv.ParseInt(got.Text, 10, 64)
		if err != nil || n < 5 || n > 10 {
			t.Fatalf("genrand(5, 10) = %q, want an integer from 5 to 10", got.Text)
		}
		seen[n] = true
	}
	if len(seen) != 6 {
		t.Errorf("200 draws from 5 to 10 gave only %d distinct values: %v", len(seen), seen)
	}
}

func TestGenrandIsReproducibleWithASeed(t *testing.T) {
	t.Parallel()
	draws := func() string {
		u := serveAgent(t, WithSeed(7, 7))
		var out []string
		for range 10 {
			got, err := agentproto.NewClient().CallFunc(context.Background(), u, "genrand", agentproto.Message{Text: "0, 1000000"}, agentproto.Claims{})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, got.Text)
		}
		return strings.Join(out, " ")
	}
	if a, b := draws(), draws(); a != b {
		t.Errorf("two agents with the same seed drew %s and %s", a, b)
	}
}

func TestParseBounds(t *testing.T) {
	t.Parallel()
	good := []struct {
		in     string
		lo, hi int64
	}{
		{"0, 19", 0, 19},
		{"5,10", 5, 10},
		{" -3 3 ", -3, 3},
		{"19, 0", 0, 19},
		{"7, 7", 7, 7},
		{"zero, nine", 0, 9},
		{"Twenty, 5", 5, 20},
	}
	for _, tt := range good {
		lo, hi, err := ParseBounds(tt.in)
		if err != nil || lo != tt.lo || hi != tt.hi {
			t.Errorf("ParseBounds(%q) = %d, %d, %v; want %d, %d", tt.in, lo, hi, err, tt.lo, tt.hi)
		}
	}
	bad := []struct{ in, says string }{
		{"", "expected two integers"},
		{"5", "expected two integers"},
		{"1, 2, 3", "expected two integers"},
		{"one, twenty-two", `"twenty-two" is not an integer`},
		{"1.5, 3", `"1.5" is not an integer`},
		{"-9223372036854775808, 9223372036854775807", "too wide"},
	}
	for _, tt := range bad {
		_, _, err := ParseBounds(tt.in)
		var ae *agentkit.Error
		if !errors.As(err, &ae) || ae.Code != agentkit.CodeBadInput || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("ParseBounds(%q) = %v, want a bad-input error saying %q", tt.in, err, tt.says)
		}
	}
}
