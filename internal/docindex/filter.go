package docindex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/contrailhq/contrail/internal/errs"
)

// Filter selects documents by their attributes. It is OpenAI's filter: a comparison (Type eq, ne, gt, gte, lt, lte,
// in, nin of the attribute Key with Value) or a compound (Type and, or of Filters). Julep's metadata_filter is an
// and of eq comparisons (MetadataFilter).
//
// A missing attribute matches ne and nin (its value is not the one named) and no other comparison. Numbers compare
// as numbers whatever their Go type; gt, gte, lt and lte also order strings (ISO dates order as dates); values of
// different kinds are never equal. Values that are JSON objects or arrays (Julep metadata) are equal when their JSON
// is.
type Filter struct {
	Type    string   `json:"type"`
	Key     string   `json:"key,omitempty"`
	Value   any      `json:"value,omitzero"` // not omitempty: false and 0 are values
	Filters []Filter `json:"filters,omitempty"`
}

// Filter limits, against filters built to exhaust a server.
const (
	maxFilterDepth = 8
	maxFilterNodes = 256
)

// ParseFilter reads a filter in OpenAI's JSON shape, checking it. field is what the caller's API calls it
// ("filters"), for the error's field path.
func ParseFilter(data []byte, field string) (*Filter, error) {
	var f Filter
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&f); err != nil {
		return nil, errs.InvalidField(field, "filters must be a comparison {key, type, value} or a compound {type, filters}: %v", err)
	}
	if err := f.Validate(field); err != nil {
		return nil, err
	}
	return &f, nil
}

// MetadataFilter is Julep's metadata_filter: every key must equal its value. Nil for an empty map.
func MetadataFilter(m map[string]any) *Filter {
	if len(m) == 0 {
		return nil
	}
	f := &Filter{Type: "and"}
	for k, v := range m {
		f.Filters = append(f.Filters, Filter{Type: "eq", Key: k, Value: v})
	}
	return f
}

// Validate checks a filter, naming the part at fault from field on ("filters.filters[1].type").
func (f *Filter) Validate(field string) error {
	nodes := 0
	return f.validate(field, 1, &nodes)
}

func (f *Filter) validate(field string, depth int, nodes *int) error {
	*nodes++
	if *nodes > maxFilterNodes {
		return errs.InvalidField(field, "filters hold more than %d filters", maxFilterNodes)
	}
	if depth > maxFilterDepth {
		return errs.InvalidField(field, "filters are nested more than %d deep", maxFilterDepth)
	}
	switch f.Type {
	case "and", "or":
		if len(f.Filters) == 0 {
			return errs.InvalidField(field+".filters", "a compound filter needs at least one filter")
		}
		for i := range f.Filters {
			if err := f.Filters[i].validate(fmt.Sprintf("%s.filters[%d]", field, i), depth+1, nodes); err != nil {
				return err
			}
		}
		return nil
	case "eq", "ne", "gt", "gte", "lt", "lte", "in", "nin":
	case "":
		return errs.Missing(field + ".type")
	default:
		return errs.InvalidField(field+".type", "unknown filter type %q: want eq, ne, gt, gte, lt, lte, in, nin, and, or", f.Type)
	}
	if f.Key == "" {
		return errs.Missing(field + ".key")
	}
	switch v := canon(f.Value).(type) { // canon, not stored: Validate only reads, so a filter may be shared
	case nil:
		return errs.Missing(field + ".value")
	case string, float64, bool:
		if f.Type == "in" || f.Type == "nin" {
			return errs.InvalidField(field+".value", "%s takes a list of values", f.Type)
		}
	case []any:
		if f.Type != "in" && f.Type != "nin" {
			return errs.InvalidField(field+".value", "%s takes a string, a number or a boolean", f.Type)
		}
		for i, x := range v {
			switch x.(type) {
			case string, float64, bool:
			default:
				return errs.InvalidField(fmt.Sprintf("%s.value[%d]", field, i), "list items must be strings, numbers or booleans")
			}
		}
	default:
		return errs.InvalidField(field+".value", "value must be a string, a number, a boolean or (for in, nin) a list")
	}
	return nil
}

// Match reports whether attributes pass the filter. A nil filter passes everything.
func (f *Filter) Match(attrs map[string]any) bool {
	if f == nil {
		return true
	}
	switch f.Type {
	case "and":
		for i := range f.Filters {
			if !f.Filters[i].Match(attrs) {
				return false
			}
		}
		return true
	case "or":
		for i := range f.Filters {
			if f.Filters[i].Match(attrs) {
				return true
			}
		}
		return false
	}
	got, ok := attrs[f.Key]
	if !ok {
		return f.Type == "ne" || f.Type == "nin"
	}
	got, want := canon(got), canon(f.Value)
	switch f.Type {
	case "eq":
		return equal(got, want)
	case "ne":
		return !equal(got, want)
	case "in", "nin":
		list, _ := want.([]any)
		in := false
		for _, x := range list {
			if equal(got, x) {
				in = true
				break
			}
		}
		return in == (f.Type == "in")
	}
	c, ok := compare(got, want)
	if !ok {
		return false
	}
	switch f.Type {
	case "gt":
		return c > 0
	case "gte":
		return c >= 0
	case "lt":
		return c < 0
	case "lte":
		return c <= 0
	}
	return false
}

func equal(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil // JSON null in Julep metadata
	}
	if c, ok := compare(a, b); ok {
		return c == 0
	}
	switch a.(type) {
	case map[string]any, []any:
		return reflect.DeepEqual(a, b)
	}
	if x, ok := a.(bool); ok {
		y, ok := b.(bool)
		return ok && x == y
	}
	return false
}

// compare orders two numbers or two strings; false for anything else.
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		switch {
		case !ok:
			return 0, false
		case x < y:
			return -1, true
		case x > y:
			return 1, true
		}
		return 0, true
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	}
	return 0, false
}

// canon turns every number into a float64 (recursively), so that values from JSON and from Go compare alike.
func canon(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case float32:
		return float64(x)
	case int:
		return float64(x)
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = canon(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = canon(e)
		}
		return out
	}
	return v
}
