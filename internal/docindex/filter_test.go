package docindex_test

import (
	"encoding/json"
	"testing"

	"github.com/contrailhq/contrail/internal/docindex"
)

// A filter round-trips through JSON with its false and zero values, as a caller storing it needs.
func TestFilterJSONKeepsZeroValues(t *testing.T) {
	t.Parallel()
	in := `{"type":"and","filters":[{"type":"eq","key":"draft","value":false},{"type":"gt","key":"n","value":0}]}`
	f, err := docindex.ParseFilter([]byte(in), "filters")
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("marshalled %s, want %s", out, in)
	}
}
