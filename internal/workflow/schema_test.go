package workflow_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contrailhq/contrail/internal/errs"
	"github.com/contrailhq/contrail/internal/workflow"
)

// TestParseRefusesABadInputSchema: a schema that cannot be compiled is refused when the task is created, with the
// field input_schema and a message that says what is wrong (and not where the server runs), and a $ref outside the
// schema is never loaded.
func TestParseRefusesABadInputSchema(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, schema, says string
	}{
		{"unknown type", "{type: strin}", "/type"},
		{"unknown type of a property", "{type: object, properties: {n: {type: integr}}}", "/properties/n/type"},
		{"negative minLength", "{type: string, minLength: -1}", "/minLength"},
		{"required that is not a list", "{type: object, required: n}", "/required"},
		{"pattern that is not a regexp", "{type: string, pattern: '('}", "missing closing )"},
		{"$ref to a missing definition", "{$ref: '#/$defs/missing'}", "$defs/missing"},
		{"$ref to a file", "{$ref: 'file:///etc/hostname'}", "file:///etc/hostname"},
		{"$ref to a relative file", "{$ref: 'other.json'}", "other.json"},
		{"$ref to an absolute path", "{$ref: '/etc/hostname'}", "/etc/hostname"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "name: bad\ninput_schema: " + c.schema + "\nmain:\n- return: 1\n"
			_, err := workflow.Parse([]byte(src))
			if err == nil {
				t.Fatalf("parsed:\n%s", src)
			}
			e := errs.As(err)
			if e == nil || e.Code != errs.Invalid || e.Field != "input_schema" || !strings.Contains(e.Message, c.says) {
				t.Fatalf("error %v (field %q), want field input_schema saying %q", err, fieldOf(e), c.says)
			}
			if strings.Contains(e.Message, wd) {
				t.Errorf("the message names the server's working directory: %s", e.Message)
			}
		})
	}
}

// TestParseFetchesNoRemoteSchema: a $ref to a URL is refused at create, and the URL is never fetched, even when
// it would answer with a good schema.
func TestParseFetchesNoRemoteSchema(t *testing.T) {
	var fetched atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetched.Add(1)
		w.Header().Set("Content-Type", "application/schema+json")
		_, _ = w.Write([]byte(`{"type": "integer"}`))
	}))
	defer srv.Close()
	ref := srv.URL + "/count.json"
	src := "name: remote\ninput_schema: {type: object, properties: {n: {$ref: '" + ref + "'}}}\nmain:\n- return: 1\n"
	_, err := workflow.Parse([]byte(src))
	e := errs.As(err)
	if e == nil || e.Code != errs.Invalid || e.Field != "input_schema" || !strings.Contains(e.Message, ref) {
		t.Errorf("error %v (field %q), want field input_schema naming %s", err, fieldOf(e), ref)
	}
	if n := fetched.Load(); n != 0 {
		t.Errorf("the schema's $ref was fetched %d times", n)
	}
}

// TestValidateInputNamesTheField: an execution's input that its task's input_schema refuses is an errs.Invalid
// whose field is the path of the value at fault in the input.
func TestValidateInputNamesTheField(t *testing.T) {
	task, err := workflow.Parse([]byte(`name: t
input_schema:
  type: object
  $defs:
    count: {type: integer, minimum: 0}
  properties:
    n: {$ref: '#/$defs/count'}
    topics: {type: array, items: {type: string}}
    user:
      type: object
      properties:
        address:
          type: object
          properties:
            city: {type: string}
          required: [city]
    extra: {type: object, additionalProperties: {type: boolean}}
  required: [n]
main:
- return: 1
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := task.ValidateInput(map[string]any{"n": 1, "topics": []any{"a"}}); err != nil {
		t.Fatalf("a good input is refused: %v", err)
	}
	cases := []struct {
		name  string
		input map[string]any
		field string
		says  string
	}{
		{"wrong type", map[string]any{"n": "four"}, "input.n", "want integer"},
		{"below the minimum", map[string]any{"n": -1}, "input.n", "minimum"},
		{"missing required field", map[string]any{"topics": []any{}}, "input", "missing property 'n'"},
		{"item of the wrong type", map[string]any{"n": 1, "topics": []any{"a", 3}}, "input.topics[1]", "want string"},
		{"nested missing field", map[string]any{"n": 1, "user": map[string]any{"address": map[string]any{}}},
			"input.user.address", "missing property 'city'"},
		{"nested field of the wrong type", map[string]any{"n": 1, "user": map[string]any{"address": map[string]any{"city": 7}}},
			"input.user.address.city", "want string"},
		{"additional property of the wrong type", map[string]any{"n": 1, "extra": map[string]any{"ok": true, "no": "x"}},
			"input.extra.no", "want boolean"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := task.ValidateInput(c.input)
			e := errs.As(err)
			if e == nil || e.Code != errs.Invalid || e.Field != c.field || !strings.Contains(e.Message, c.says) ||
				!strings.HasPrefix(e.Message, c.field+": ") {
				t.Fatalf("error %v (field %q), want field %q saying %q", err, fieldOf(e), c.field, c.says)
			}
		})
	}
}
