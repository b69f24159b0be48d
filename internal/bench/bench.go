// Package bench measures Contrail's parts against raw JetStream doing the same work in the same run, so that the
// figures are ratios that hold from machine to machine. `contrail bench` prints them; Go benchmarks call the same
// functions.
package bench

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// Figure is one measured quantity, with the raw-JetStream figure it compares to when there is one.
type Figure struct {
	Name     string  `json:"name"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
	Baseline float64 `json:"baseline,omitempty"` // the raw JetStream figure, same unit
	// Ratio is Value/Baseline for rates and Baseline/Value for latencies, so above 1 is always "faster than raw".
	Ratio float64 `json:"ratio,omitempty"`
	Note  string  `json:"note,omitempty"`
}

// Report is a list of figures.
type Report struct {
	Title   string   `json:"title"`
	Figures []Figure `json:"figures"`
}

// Print writes the report as a table.
func (r Report) Print(w io.Writer) error {
	fmt.Fprintf(w, "%s\n", r.Title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "measure\tvalue\tunit\traw JetStream\tratio\t")
	for _, f := range r.Figures {
		base, ratio := "-", "-"
		if f.Baseline > 0 {
			base = format(f.Baseline)
			ratio = fmt.Sprintf("%.2f", f.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t\n", f.Name, format(f.Value), f.Unit, base, ratio)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, f := range r.Figures {
		if f.Note != "" {
			fmt.Fprintf(w, "  %s: %s\n", f.Name, f.Note)
		}
	}
	return nil
}

func format(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.4f", v)
	}
}

// rate is a throughput figure compared with its raw baseline.
func rate(name string, n int, d, raw time.Duration) Figure {
	v := float64(n) / d.Seconds()
	f := Figure{Name: name, Value: v, Unit: "events/s"}
	if raw > 0 {
		f.Baseline = float64(n) / raw.Seconds()
		f.Ratio = f.Value / f.Baseline
	}
	return f
}

// latency is a latency figure (milliseconds) compared with its raw baseline.
func latency(name string, v, raw time.Duration) Figure {
	f := Figure{Name: name, Value: ms(v), Unit: "ms"}
	if raw > 0 {
		f.Baseline = ms(raw)
		f.Ratio = f.Baseline / f.Value
	}
	return f
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Percentile returns the p-th percentile (0-100) of the samples.
func Percentile(samples []time.Duration, p float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	i := int(float64(len(s)-1) * p / 100)
	return s[i]
}
