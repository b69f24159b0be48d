// Package chart is a sample Code Shot agent that answers with an embed: its func chart draws a bar chart of the
// numbers it is given and returns it as a PNG in a data: URI, referred to as #chart in the reply's text.
package chart

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"regexp"
	"strconv"

	"github.com/contrailhq/contrail/internal/agentproto"
	"github.com/contrailhq/contrail/internal/agentproto/agentkit"
	"github.com/contrailhq/contrail/internal/codeshot"
)

// BasePrompt and FewShots teach the model to hand the numbers to Func[chart] and pass its #chart embed on.
const (
	BasePrompt = "I draw bar charts. I collect the numbers from a question and let Func[chart] draw them."
	FewShots   = `Q: Draw a bar chart of 3, 7 and 2.
Ask Func[chart]: 3, 7, 2
Func[chart] says: Here is the chart #chart
A: Here is the chart #chart

Q: Plot the numbers 10, 20, 15 and 30 as bars.
Ask Func[chart]: 10, 20, 15, 30
Func[chart] says: Here is the chart #chart
A: Here is your bar chart #chart`
)

// EmbedKey is the key of the chart in the reply's embeds.
const EmbedKey = "chart"

// MaxBars bounds how many numbers one chart draws.
const MaxBars = 100

// Agent returns the chart agent.
func Agent() agentkit.Agent {
	return agentkit.Agent{
		BasePrompt: BasePrompt,
		FewShots:   codeshot.Split(FewShots),
		Funcs:      map[string]agentkit.Func{"chart": chart},
	}
}

// Handler serves the agent.
func Handler(opts ...agentkit.Option) (http.Handler, error) { return agentkit.New(Agent(), opts...) }

func chart(_ context.Context, c agentkit.Call) (agentproto.Message, error) {
	values := Numbers(c.Message.Text)
	if len(values) == 0 {
		return agentproto.Message{}, agentkit.BadInput("no numbers to chart in %q", c.Message.Text)
	}
	img, err := Draw(values)
	if err != nil {
		return agentproto.Message{}, err
	}
	return agentproto.Message{
		Text: "Here is the chart #" + EmbedKey,
		Embeds: map[string]agentproto.Embed{EmbedKey: {
			ContentType: "image/png",
			URI:         "data:image/png;base64," + base64.StdEncoding.EncodeToString(img),
		}},
	}, nil
}

var number = regexp.MustCompile(`[-+]?(?:\d+(?:\.\d*)?|\.\d+)`)

// Numbers returns the numbers written in text, in order.
func Numbers(text string) []float64 {
	var out []float64
	for _, s := range number.FindAllString(text, -1) {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			out = append(out, v)
		}
	}
	return out
}

// Geometry of a chart, in pixels.
const (
	height = 240
	margin = 20
	barW   = 32
	gap    = 12
)

var palette = color.Palette{
	color.White,
	color.Gray{Y: 0x60}, // axis
	color.RGBA{R: 0x2b, G: 0x6c, B: 0xb0, A: 0xff}, // bars, alternating
	color.RGBA{R: 0x4f, G: 0x9d, B: 0xd9, A: 0xff},
}

// Draw draws one bar per value, on a baseline at zero (negative values hang below it), and encodes it as PNG.
func Draw(values []float64) ([]byte, error) {
	if len(values) == 0 || len(values) > MaxBars {
		return nil, agentkit.BadInput("a chart needs 1 to %d numbers, got %d", MaxBars, len(values))
	}
	hi, lo := 0.0, 0.0
	for _, v := range values {
		hi, lo = max(hi, v), min(lo, v)
	}
	span := hi - lo
	if span == 0 {
		span = 1
	}
	plot := float64(height - 2*margin)
	width := 2*margin + len(values)*barW + (len(values)-1)*gap
	img := image.NewPaletted(image.Rect(0, 0, width, height), palette)
	y := func(v float64) int { return margin + int((hi-v)/span*plot+0.5) }
	base := y(0)
	for i, v := range values {
		x0 := margin + i*(barW+gap)
		top, bottom := min(y(v), base), max(y(v), base)
		for py := top; py < bottom; py++ {
			for px := x0; px < x0+barW; px++ {
				img.SetColorIndex(px, py, uint8(2+i%2))
			}
		}
	}
	for px := margin / 2; px < width-margin/2; px++ {
		img.SetColorIndex(px, base, 1)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode chart: %w", err)
	}
	return buf.Bytes(), nil
}
