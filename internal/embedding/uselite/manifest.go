package uselite

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// graphFile is the part of a TF.js graph model (model.json) this package reads.
type graphFile struct {
	ModelTopology struct {
		Node []graphNode `json:"node"`
	} `json:"modelTopology"`
	WeightsManifest []weightGroup `json:"weightsManifest"`
}

type graphNode struct {
	Name  string   `json:"name"`
	Op    string   `json:"op"`
	Input []string `json:"input"`
}

// weightGroup is one entry of the manifest: shard files that, concatenated, hold the listed weights in order.
type weightGroup struct {
	Paths   []string     `json:"paths"`
	Weights []weightSpec `json:"weights"`
}

type weightSpec struct {
	Name         string          `json:"name"`
	Shape        []int           `json:"shape"`
	DType        string          `json:"dtype"`
	Quantization json.RawMessage `json:"quantization"`
}

// tensor is a weight as stored: its shape and its values, float32 or int32 by dtype.
type tensor struct {
	shape []int
	f32   []float32
	i32   []int32
}

func (t tensor) size() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// graph is a loaded TF.js graph model: its nodes, and its weights by name.
type graph struct {
	nodes   []graphNode
	weights map[string]tensor
}

// loadGraph reads model.json in dir and the weight shards its manifest names.
func loadGraph(dir string) (*graph, error) {
	path := filepath.Join(dir, "model.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read graph model: %w", err)
	}
	var f graphFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("parse %s: %w", path, err)
	}
	if len(f.ModelTopology.Node) == 0 {
		return nil, fmt.Errorf("parse %s: no modelTopology.node: not a TF.js graph model", path)
	}
	g := &graph{nodes: f.ModelTopology.Node, weights: make(map[string]tensor)}
	for i, group := range f.WeightsManifest {
		if err := g.loadGroup(dir, group); err != nil {
			return nil, fmt.Errorf("%s: weight group %d: %w", path, i, err)
		}
	}
	return g, nil
}

// loadGroup reads one manifest group. Its shards are one byte stream cut into files of at most a few MiB, so a
// weight may straddle two shards: they are read whole and concatenated before the weights are sliced out.
func (g *graph) loadGroup(dir string, group weightGroup) error {
	var data []byte
	for _, p := range group.Paths {
		if filepath.IsAbs(p) || !filepath.IsLocal(p) {
			return fmt.Errorf("shard path %q leaves the model directory", p)
		}
		b, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			return fmt.Errorf("read shard: %w", err)
		}
		data = append(data, b...)
	}
	off := 0
	for _, w := range group.Weights {
		if len(w.Quantization) > 0 && string(w.Quantization) != "null" {
			return fmt.Errorf("weight %q is quantized; only float32 and int32 weights are supported", w.Name)
		}
		t := tensor{shape: slices.Clone(w.Shape)}
		for _, d := range t.shape {
			if d < 0 {
				return fmt.Errorf("weight %q has negative dimension in shape %v", w.Name, w.Shape)
			}
		}
		n := t.size()
		if n > (len(data)-off)/4 {
			return fmt.Errorf("weight %q (%s %v) needs %d bytes at offset %d, but the shards hold %d bytes",
				w.Name, w.DType, w.Shape, 4*n, off, len(data))
		}
		b := data[off : off+4*n]
		off += 4 * n
		switch w.DType {
		case "float32":
			t.f32 = make([]float32, n)
			for i := range t.f32 {
				t.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
			}
		case "int32":
			t.i32 = make([]int32, n)
			for i := range t.i32 {
				t.i32[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
			}
		default:
			return fmt.Errorf("weight %q has dtype %q; only float32 and int32 are supported", w.Name, w.DType)
		}
		if _, dup := g.weights[w.Name]; dup {
			return fmt.Errorf("weight %q is listed twice", w.Name)
		}
		g.weights[w.Name] = t
	}
	if off != len(data) {
		return fmt.Errorf("the manifest accounts for %d bytes but the shards hold %d", off, len(data))
	}
	return nil
}

// float32s returns the float32 weight called name, checking that it has the given shape.
func (g *graph) float32s(name string, shape ...int) ([]float32, error) {
	t, ok := g.weights[name]
	switch {
	case !ok:
		return nil, fmt.Errorf("weight %q is missing", name)
	case t.f32 == nil:
		return nil, fmt.Errorf("weight %q is not float32", name)
	case !slices.Equal(t.shape, shape):
		return nil, fmt.Errorf("weight %q has shape %v, want %v", name, t.shape, shape)
	}
	return t.f32, nil
}

// scalar returns the single value of a float32 or int32 weight of shape [] or [1].
func (g *graph) scalar(name string) (float64, error) {
	t, ok := g.weights[name]
	if !ok {
		return 0, fmt.Errorf("weight %q is missing", name)
	}
	if t.size() != 1 || len(t.shape) > 1 {
		return 0, fmt.Errorf("weight %q has shape %v, want a scalar", name, t.shape)
	}
	if t.f32 != nil {
		return float64(t.f32[0]), nil
	}
	return float64(t.i32[0]), nil
}
