package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
)

// ErrUnknownType marks an event whose type this build does not know. Old logs may hold such events; readers skip
// them rather than fail.
var ErrUnknownType = errors.New("unknown event type")

// Registry maps event type names to their Go types.
type Registry struct {
	types map[string]reflect.Type
}

// NewRegistry returns a registry holding every event type Contrail defines.
func NewRegistry() *Registry {
	r := &Registry{types: map[string]reflect.Type{}}
	for _, group := range allEvents() {
		r.Register(group...)
	}
	return r
}

// Register adds event types. Each type must be a struct value (not a pointer) and its name must be unique.
func (r *Registry) Register(evs ...Event) {
	for _, e := range evs {
		t := reflect.TypeOf(e)
		if t.Kind() != reflect.Struct {
			panic(fmt.Sprintf("register %T: events are struct values", e))
		}
		name := e.EventType()
		if agg, n := SplitType(name); agg == "" || n == "" {
			panic(fmt.Sprintf("register %T: type %q is not <aggregate>.<name>", e, name))
		}
		if prev, ok := r.types[name]; ok && prev != t {
			panic(fmt.Sprintf("register %T: type %q already belongs to %s", e, name, prev))
		}
		r.types[name] = t
	}
}

// Decode turns stored JSON into the typed event. An unknown type returns ErrUnknownType.
func (r *Registry) Decode(eventType string, data []byte) (Event, error) {
	t, ok := r.types[eventType]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownType, eventType)
	}
	v := reflect.New(t)
	if len(data) > 0 {
		if err := json.Unmarshal(data, v.Interface()); err != nil {
			return nil, fmt.Errorf("decode %s: %w", eventType, err)
		}
	}
	return v.Elem().Interface().(Event), nil
}

// Types lists the registered type names, sorted.
func (r *Registry) Types() []string {
	out := make([]string, 0, len(r.types))
	for name := range r.types {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// Known reports whether the type is registered.
func (r *Registry) Known(eventType string) bool {
	_, ok := r.types[eventType]
	return ok
}
