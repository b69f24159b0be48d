package uselite

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeModel writes a model.json with the given manifest and shards into a new directory.
func writeModel(t *testing.T, manifest string, shards map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	graph := `{"modelTopology": {"node": [{"name": "x", "op": "Placeholder"}]}, "weightsManifest": ` + manifest + `}`
	if err := os.WriteFile(filepath.Join(dir, "model.json"), []byte(graph), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, b := range shards {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func le32(vals ...uint32) []byte {
	b := make([]byte, 4*len(vals))
	for i, v := range vals {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func TestLoadGraphAcrossShards(t *testing.T) {
	t.Parallel()
	// A [2,2] float32 weight and an int32 scalar, cut into shards of 6 and 14 bytes so that a value straddles
	// the boundary.
	data := slices.Concat(le32(math.Float32bits(1.5), math.Float32bits(-2), math.Float32bits(0.25), math.Float32bits(8)),
		le32(uint32(0xFFFFFFFF)))
	dir := writeModel(t, `[{"paths": ["a", "b"], "weights": [
		{"name": "w", "shape": [2, 2], "dtype": "float32"},
		{"name": "n", "shape": [], "dtype": "int32"}]}]`,
		map[string][]byte{"a": data[:6], "b": data[6:]})
	g, err := loadGraph(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := g.float32s("w", 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{1.5, -2, 0.25, 8}; !slices.Equal(w, want) {
		t.Errorf("w = %v, want %v", w, want)
	}
	if n, err := g.scalar("n"); err != nil || n != -1 {
		t.Errorf("scalar n = %v, %v; want -1", n, err)
	}
	if _, err := g.float32s("w", 4); err == nil || !strings.Contains(err.Error(), "shape [2 2], want [4]") {
		t.Errorf("float32s with the wrong shape: err = %v", err)
	}
	if _, err := g.float32s("n"); err == nil || !strings.Contains(err.Error(), "not float32") {
		t.Errorf("float32s of an int32 weight: err = %v", err)
	}
	if _, err := g.scalar("w"); err == nil || !strings.Contains(err.Error(), "want a scalar") {
		t.Errorf("scalar of a matrix: err = %v", err)
	}
	if _, err := g.float32s("absent"); err == nil || !strings.Contains(err.Error(), `"absent" is missing`) {
		t.Errorf("float32s of a missing weight: err = %v", err)
	}
}

func TestLoadGraphErrors(t *testing.T) {
	t.Parallel()
	four := le32(1, 2, 3, 4)
	tests := []struct {
		name     string
		manifest string
		shards   map[string][]byte
		want     string
	}{
		{"missing shard", `[{"paths": ["a"], "weights": [{"name": "w", "shape": [4], "dtype": "float32"}]}]`,
			nil, "read shard"},
		{"short shard", `[{"paths": ["a"], "weights": [{"name": "w", "shape": [5], "dtype": "float32"}]}]`,
			map[string][]byte{"a": four}, `weight "w" (float32 [5]) needs 20 bytes at offset 0, but the shards hold 16`},
		{"extra bytes", `[{"paths": ["a"], "weights": [{"name": "w", "shape": [3], "dtype": "float32"}]}]`,
			map[string][]byte{"a": four}, "accounts for 12 bytes but the shards hold 16"},
		{"quantized", `[{"paths": ["a"], "weights": [{"name": "w", "shape": [4], "dtype": "float32",
			"quantization": {"dtype": "uint8", "scale": 0.1, "min": 0}}]}]`,
			map[string][]byte{"a": four}, `weight "w" is quantized`},
		{"other dtype", `[{"paths": ["a"], "weights": [{"name": "w", "shape": [4], "dtype": "bool"}]}]`,
			map[string][]byte{"a": four}, `dtype "bool"`},
		{"escaping path", `[{"paths": ["../a"], "weights": []}]`, nil, `shard path "../a" leaves the model directory`},
		{"duplicate", `[{"paths": ["a"], "weights": [{"name": "w", "shape": [2], "dtype": "int32"},
			{"name": "w", "shape": [2], "dtype": "int32"}]}]`, map[string][]byte{"a": four}, `"w" is listed twice`},
		{"not json", `[`, nil, "parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := loadGraph(writeModel(t, tt.manifest, tt.shards))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}

	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "model.json"), []byte(`{"format": "layers-model"}`), 0o644)
	if _, err := loadGraph(empty); err == nil || !strings.Contains(err.Error(), "not a TF.js graph model") {
		t.Errorf("a model.json without nodes: err = %v", err)
	}
}
