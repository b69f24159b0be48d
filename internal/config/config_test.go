package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/contrailhq/contrail/internal/config"
)

func TestDefaultsAreValid(t *testing.T) {
	if err := config.Defaults().Validate(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
}

// TestContainerSweepMustBePositive: a sweep interval of zero or less is refused naming its flag, not run as some
// other interval.
func TestContainerSweepMustBePositive(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second} {
		c := config.Defaults()
		c.ContainerSweep = d
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), "--container-sweep") {
			t.Errorf("--container-sweep %s: %v", d, err)
		}
	}
}
