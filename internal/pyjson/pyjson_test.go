package pyjson_test

import (
	"encoding/json"
	"testing"

	"github.com/contrailhq/contrail/internal/pyjson"
)

func TestDumps(t *testing.T) {
	two := 2
	compact, colon := ",", ":"
	cases := []struct {
		name string
		v    any
		o    pyjson.Options
		want string
	}{
		{"default separators", map[string]any{"b": 1, "a": []any{1, 2.5, nil, true}}, pyjson.Defaults(), `{"a": [1, 2.5, null, true], "b": 1}`},
		{"ordered object", pyjson.Object{{"z", 1}, {"a", 2}}, pyjson.Defaults(), `{"z": 1, "a": 2}`},
		{"sort keys", pyjson.Object{{"z", 1}, {"a", 2}}, pyjson.Options{ASCII: true, SortKeys: true}, `{"a": 2, "z": 1}`},
		{"ensure ascii", "é😀\n\"\\", pyjson.Defaults(), `"\u00e9\ud83d\ude00\n\"\\"`},
		{"no ensure ascii", "é\x01", pyjson.Options{}, "\"é\\u0001\""},
		{"indent", map[string]any{"a": []any{1}, "b": map[string]any{}}, pyjson.Options{ASCII: true, Indent: &two}, "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}"},
		{"separators", []any{1, map[string]any{"a": 1}}, pyjson.Options{ItemSep: &compact, KeySep: &colon}, `[1,{"a":1}]`},
		{"html safe", "<a href='x'>&", pyjson.Options{ASCII: true, HTMLSafe: true}, `"\u003ca href=\u0027x\u0027\u003e\u0026"`},
		{"json number", json.Number("12345678901234567890"), pyjson.Defaults(), `12345678901234567890`},
		{"struct", struct {
			A int `json:"a"`
		}{3}, pyjson.Defaults(), `{"a": 3}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := pyjson.Dumps(c.v, c.o)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// The expected strings are what Python 3's repr(float) prints.
func TestFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 2.5: "2.5", -0.5: "-0.5", 1e16: "1e+16", 1e15: "1000000000000000.0", 0.0001: "0.0001",
		0.00001: "1e-05", 123456789.125: "123456789.125", 1.5e300: "1.5e+300", 0.30000000000000004: "0.30000000000000004",
		-1e-7: "-1e-07", 100: "100.0",
	} {
		if got := pyjson.Float(f); got != want {
			t.Errorf("Float(%v) = %s, want %s", f, got, want)
		}
	}
}
