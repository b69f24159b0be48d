package natsx

import (
	"strings"
	"testing"
)

func TestCheckServerVersion(t *testing.T) {
	for _, tc := range []struct {
		version string
		ok      bool
	}{
		{"2.15.2", true}, {"2.12.0", true}, {"v2.12.1-RC.2", true}, {"3.0.0", true},
		{"2.11.9", false}, {"2.9.10", false}, {"2.10.0", false}, {"", false},
	} {
		err := CheckServerVersion(tc.version)
		if (err == nil) != tc.ok {
			t.Errorf("CheckServerVersion(%q) = %v, want ok=%v", tc.version, err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), MinServerVersion) {
			t.Errorf("the refusal must name the version needed: %v", err)
		}
	}
}
