package chart

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"image/png"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/codeshot"
)

func TestNumbers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []float64
	}{
		{"3, 7, 2", []float64{3, 7, 2}},
		{"Draw 10, 20.5 and -4 please", []float64{10, 20.5, -4}},
		{".5 +2", []float64{0.5, 2}},
		{"no numbers", nil},
	}
	for _, tt := range tests {
		if got := Numbers(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("Numbers(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestDrawMakesAPNGBarChart(t *testing.T) {
	t.Parallel()
	data, err := Draw([]float64{3, 7, -2})
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("the chart is not a PNG: %v", err)
	}
	b := img.Bounds()
	if want := 2*margin + 3*barW + 2*gap; b.Dx() != want || b.Dy() != height {
		t.Errorf("chart is %dx%d, want %dx%d", b.Dx(), b.Dy(), want, height)
	}
	white := func(x, y int) bool {
		r, g, bl, _ := img.At(x, y).RGBA()
		return r == 0xffff && g == 0xffff && bl == 0xffff
	}
	mid := func(i int) int { return margin + i*(barW+gap) + barW/2 }
	// The tallest bar (7) reaches the top of the plot; the 3 bar does not; the -2 bar hangs below the baseline,
	// which sits at 7/9 of the plot's height.
	top, bottom := margin, height-margin-1
	base := margin + 156 // 7/9 of the 200-pixel plot, rounded
	checks := []struct {
		name  string
		x, y  int
		white bool
	}{
		{"top of the 7 bar", mid(1), top + 1, false},
		{"above the 3 bar", mid(0), top + 1, true},
		{"inside the 3 bar, above the baseline", mid(0), base - 2, false},
		{"below the baseline under the 3 bar", mid(0), base + 2, true},
		{"inside the -2 bar, below the baseline", mid(2), base + 2, false},
		{"above the baseline over the -2 bar", mid(2), base - 2, true},
		{"bottom of the -2 bar", mid(2), bottom - 1, false},
		{"between bars", margin + barW + gap/2, base - 2, true},
	}
	for _, c := range checks {
		if got := white(c.x, c.y); got != c.white {
			t.Errorf("%s (%d,%d): white = %v, want %v", c.name, c.x, c.y, got, c.white)
		}
	}
}

func TestDrawLimits(t *testing.T) {
	t.Parallel()
	if _, err := Draw(nil); err == nil {
		t.Error("Draw(nil) succeeded")
	}
	if _, err := Draw(make([]float64, MaxBars+1)); err == nil || !strings.Contains(err.Error(), "1 to 100 numbers") {
		t.Errorf("Draw of %d values = %v, want an error naming the limit", MaxBars+1, err)
	}
	if _, err := Draw([]float64{0, 0}); err != nil {
		t.Errorf("Draw of zeros: %v", err)
	}
}

func TestAgentAnswersWithAnEmbed(t *testing.T) {
	t.Parallel()
	h, err := Handler()
	if err != nil {
		t.Fatalf("Handler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := agentproto.NewClient()
	got, err := c.CallFunc(context.Background(), srv.URL, "chart", agentproto.Message{Text: "3, 7, 2"}, agentproto.Claims{})
	if err != nil {
		t.Fatalf("chart(3, 7, 2): %v", err)
	}
	if !slices.Equal(codeshot.EmbedRefs(got.Text), []string{EmbedKey}) {
		t.Errorf("reply %q does not refer to #%s", got.Text, EmbedKey)
	}
	e := got.Embeds[EmbedKey]
	b64, ok := strings.CutPrefix(e.URI, "data:image/png;base64,")
	if e.ContentType != "image/png" || !ok {
		t.Fatalf("embed = %.60q (%s), want a PNG data: URI", e.URI, e.ContentType)
	}
	data, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(data)); err != nil {
		t.Errorf("the embed is not a PNG: %v", err)
	}

	_, err = c.CallFunc(context.Background(), srv.URL, "chart", agentproto.Message{Text: "nothing"}, agentproto.Claims{})
	if !errors.Is(err, agentproto.ErrStatus) || !strings.Contains(err.Error(), `no numbers to chart in "nothing"`) {
		t.Errorf("chart(nothing) = %v, want a bad-input error", err)
	}
}
