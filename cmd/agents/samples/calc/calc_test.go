package calc

import (
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/agentproto"
)

func TestEval(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		want float64
	}{
		{"12 * 7", 84},
		{"1 + 2 * 3", 7},          // * before +
		{"(1 + 2) * 3", 9},        // parentheses first
		{"10 - 4 - 3", 3},         // - groups to the left
		{"100 / 10 / 5", 2},       // / groups to the left
		{"2 ^ 3 ^ 2", 512},        // ^ groups to the right
		{"2 ** 10", 1024},         // ** is ^
		{"-2 ^ 2", -4},            // ^ before unary minus
		{"(-2) ^ 2", 4},           //
		{"2 ^ -1", 0.5},           // a signed exponent
		{"-3 - -3", 0},            // unary minus after an operator
		{"--3", 3},                //
		{"+4", 4},                 //
		{"2 * -3", -6},            //
		{"3.5 + .5", 4},           // decimals
		{"1e3 + 2.5E-1", 1000.25}, // exponents
		{"6 × 7 ÷ 2", 21},         // the signs people type
		{"sqrt(16) + abs(-2)", 6}, // functions
		{"SQRT(9)", 3},            // in any case
		{"max(1, 5, 3) - min(4, 2)", 3},
		{"round(2.5) + floor(1.9) + ceil(1.1)", 6},
		{"log(1000) + ln(e) + log2(8)", 7},
		{"2 * pi", 2 * math.Pi},
		{"sin(0) + cos(0)", 1},
		{"  ( ( 7 ) )  ", 7},
	}
	for _, tt := range tests {
		got, err := Eval(tt.expr)
		if err != nil {
			t.Errorf("Eval(%q): %v", tt.expr, err)
			continue
		}
		if math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Eval(%q) = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestEvalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		expr string
		says string
	}{
		{"", "the expression is empty"},
		{"   ", "the expression is empty"},
		{"1 / 0", "division by zero"},
		{"5 / (2 - 2)", "division by zero"},
		{"0 ^ -1", "division by zero"},
		{"sqrt(-4)", "sqrt of a negative number (-4)"},
		{"ln(0)", "ln of a number that is not positive (0)"},
		{"(-8) ^ 0.5", "-8 to the power 0.5 is not a real number"},
		{"10 ^ 400", "the result is too large"},
		{"1 +", "the expression ends too early"},
		{"(1 + 2", `the "(" at position 1 is never closed`},
		{"(1 + 2 3)", `unexpected "3" at position 8: expected ")" to close the "(" at position 1`},
		{"1 + 2)", `unexpected ")" at position 6`},
		{"2 $ 3", `unexpected '$' at position 3`},
		{"1.2.3", `"1.2.3" at position 1 is not a number`},
		{"2e", `unexpected "e" at position 2`},
		{"foo(2)", `unknown function or constant "foo" at position 1`},
		{"sqrt 4", "sqrt at position 1 needs its argument in parentheses"},
		{"sqrt(4, 9)", "sqrt takes 1 argument, not 2"},
		{"max(1,", "the expression ends too early"},
		{"import os", `unknown function or constant "import"`},
		{"__import__('os')", `unexpected '_' at position 1`},
		{strings.Repeat("(", 150) + "1" + strings.Repeat(")", 150), "nests deeper than 100 levels"},
		{strings.Repeat("-", 150) + "1", "nests deeper than 100 levels"},
		{strings.Repeat("1+", 600) + "1", "longer than 1000 characters"},
	}
	for _, tt := range tests {
		v, err := Eval(tt.expr)
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Eval(%.40q) = %v, %v; want an error saying %q", tt.expr, v, err, tt.says)
		}
	}
	if _, err := Eval("7 / 0"); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("Eval(7 / 0) = %v, want ErrDivisionByZero", err)
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    float64
		want string
	}{
		{84, "84"},
		{-6, "-6"},
		{math.Copysign(0, -1), "0"},
		{0.1 + 0.2, "0.3"},
		{1.0 / 3, "0.333333333333"},
		{1e21, "1e21"},
		{2.5e-7, "2.5e-07"},
	}
	for _, tt := range tests {
		if got := Format(tt.v); got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestAgent(t *testing.T) {
	t.Parallel()
	h, err := Handler()
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := agentproto.NewClient()
	got, err := c.CallFunc(context.Background(), srv.URL, "calc", agentproto.Message{Text: "12 * 7 ="}, agentproto.Claims{})
	if err != nil || got.Text != "84" {
		t.Errorf("calc(12 * 7 =) = %+v, %v; want 84", got, err)
	}
	_, err = c.CallFunc(context.Background(), srv.URL, "calc", agentproto.Message{Text: "1 / 0"}, agentproto.Claims{})
	if !errors.Is(err, agentproto.ErrStatus) || !strings.Contains(err.Error(), `cannot calculate "1 / 0": division by zero`) {
		t.Errorf("calc(1 / 0) = %v, want a bad-input error saying division by zero", err)
	}
}
